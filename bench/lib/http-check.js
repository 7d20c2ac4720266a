'use strict';

// Raw-socket HTTP/1.1 client used to prove each server's output before it is
// timed. A raw socket (not http.get) so we see exactly the bytes on the wire:
// framing, header spelling, and the response size we report, and so we can
// send pipelined requests in one write the way wrk does.

const net = require('node:net');

// Parse one response from the start of `buf`. Returns null when more bytes
// are needed, else { status, reason, headers, rawHeaders, body, bytes }.
function parseResponse(buf) {
  const end = buf.indexOf('\r\n\r\n');
  if (end === -1) return null;
  const lines = buf.subarray(0, end).toString('latin1').split('\r\n');
  const m = /^HTTP\/1\.[01] (\d{3})(?: (.*))?$/.exec(lines[0]);
  if (!m) throw new Error(`bad status line: ${JSON.stringify(lines[0])}`);
  const headers = {};
  const rawHeaders = [];
  for (const line of lines.slice(1)) {
    const i = line.indexOf(':');
    if (i <= 0) throw new Error(`bad header line: ${JSON.stringify(line)}`);
    const name = line.slice(0, i);
    const value = line.slice(i + 1).trim();
    rawHeaders.push([name, value]);
    const key = name.toLowerCase();
    headers[key] = key in headers ? `${headers[key]}, ${value}` : value;
  }
  const status = Number(m[1]);
  let pos = end + 4;
  let body;
  if (/\bchunked\b/i.test(headers['transfer-encoding'] || '')) {
    const parts = [];
    for (;;) {
      const lineEnd = buf.indexOf('\r\n', pos);
      if (lineEnd === -1) return null;
      const size = parseInt(buf.subarray(pos, lineEnd).toString('latin1'), 16);
      if (Number.isNaN(size)) throw new Error('bad chunk size');
      pos = lineEnd + 2;
      if (size === 0) {
        // Optional trailers, then the final CRLF.
        const trailerEnd = buf.indexOf('\r\n', pos);
        if (trailerEnd === -1) return null;
        if (trailerEnd !== pos) {
          const te = buf.indexOf('\r\n\r\n', pos);
          if (te === -1) return null;
          pos = te + 4;
        } else {
          pos += 2;
        }
        break;
      }
      if (buf.length < pos + size + 2) return null;
      parts.push(buf.subarray(pos, pos + size));
      pos += size + 2;
    }
    body = Buffer.concat(parts);
  } else if ('content-length' in headers) {
    const len = Number(headers['content-length']);
    if (!Number.isInteger(len) || len < 0) throw new Error(`bad Content-Length ${headers['content-length']}`);
    if (buf.length < pos + len) return null;
    body = buf.subarray(pos, pos + len);
    pos += len;
  } else if (status === 204 || status === 304 || (status >= 100 && status < 200)) {
    body = Buffer.alloc(0);
  } else {
    // Close-delimited: unusable for keep-alive benchmarking.
    throw new Error('response has neither Content-Length nor chunked framing (close-delimited)');
  }
  return { status, reason: m[2] || '', headers, rawHeaders, body: Buffer.from(body), bytes: pos };
}

// Send `requests` (strings/Buffers) on one keep-alive connection.
// pipelined=false: write one, wait for its response, write the next (proves
// keep-alive reuse). pipelined=true: write them all in a single write.
// tls: tls.connect options (the https rows); the certificate is verified against `tls.ca`.
function exchange(port, requests, { pipelined = false, timeoutMs = 5000, tls: tlsOpts } = {}) {
  return new Promise((resolve, reject) => {
    const socket = tlsOpts ?
      require('node:tls').connect({ host: '127.0.0.1', port, ...tlsOpts }) :
      net.connect({ host: '127.0.0.1', port });
    const responses = [];
    let buf = Buffer.alloc(0);
    let next = 0;
    let done = false;
    const finish = (err) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      if (err) reject(err); else resolve(responses);
    };
    const timer = setTimeout(() => finish(new Error(
      `timeout after ${timeoutMs} ms with ${responses.length}/${requests.length} responses`)), timeoutMs);
    const sendNext = () => {
      if (pipelined) {
        socket.write(Buffer.concat(requests.map((r) => Buffer.from(r))));
        next = requests.length;
      } else {
        socket.write(requests[next++]);
      }
    };
    socket.on(tlsOpts ? 'secureConnect' : 'connect', sendNext);
    socket.on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      try {
        for (;;) {
          const res = parseResponse(buf);
          if (!res) break;
          responses.push(res);
          buf = buf.subarray(res.bytes);
          if (responses.length === requests.length) {
            if (buf.length) return finish(new Error(`${buf.length} unexpected extra bytes after the last response`));
            return finish();
          }
          if (!pipelined && next < requests.length) sendNext();
        }
      } catch (err) {
        finish(err);
      }
    });
    socket.on('error', finish);
    socket.on('close', () => finish(new Error(
      `connection closed after ${responses.length}/${requests.length} responses`)));
  });
}

// Compare one response with an expectation
// { status, headers: {name: value}, body: string|Buffer|fn(body)->problem }.
// Returns a list of human-readable problems (empty = OK).
function verify(res, expect) {
  const problems = [];
  if (res.status !== expect.status) problems.push(`status ${res.status}, want ${expect.status}`);
  for (const [name, want] of Object.entries(expect.headers || {})) {
    const got = res.headers[name.toLowerCase()];
    if (got !== want) problems.push(`header ${name}: ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
  }
  const cl = res.headers['content-length'];
  if (cl !== undefined && Number(cl) !== res.body.length) problems.push(`Content-Length ${cl} but body ${res.body.length}`);
  if (/\bclose\b/i.test(res.headers.connection || '')) problems.push('server sent Connection: close');
  if (typeof expect.body === 'function') {
    const p = expect.body(res.body);
    if (p) problems.push(p);
  } else if (expect.body !== undefined) {
    const want = Buffer.from(expect.body);
    if (!want.equals(res.body)) {
      const shown = res.body.length > 60 ? `${res.body.length} bytes` : JSON.stringify(res.body.toString('latin1'));
      problems.push(`body ${shown}, want ${want.length > 60 ? `${want.length} bytes` : JSON.stringify(want.toString())}`);
    }
  }
  return problems;
}

module.exports = { parseResponse, exchange, verify };
