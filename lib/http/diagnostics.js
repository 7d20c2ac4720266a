'use strict';
// diagnostics_channel messages node:http and net publish for a server, with the same message
// objects, on the Node versions that publish them (APM agents subscribe to these).
// http.server.response.created comes from node's own ServerResponse constructor.
const dc = require('node:diagnostics_channel');

const requestStart = dc.channel('http.server.request.start');
const responseFinish = dc.channel('http.server.response.finish');
const serverSocket = dc.channel('net.server.socket');
const serverListen = typeof dc.tracingChannel === 'function' ?
  dc.tracingChannel('net.server.listen') : null;

module.exports = { requestStart, responseFinish, serverSocket, serverListen };
