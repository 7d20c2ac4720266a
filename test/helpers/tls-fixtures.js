'use strict';
// The test certificates of test/fixtures/tls (made once by its gen.sh): a CA, server RSA 2048
// and ECDSA P-256 pairs for localhost / 127.0.0.1, and a client pair the CA signed.
const fs = require('node:fs');
const path = require('node:path');

const dir = path.join(__dirname, '..', 'fixtures', 'tls');
const read = (name) => fs.readFileSync(path.join(dir, name));

module.exports = {
  dir,
  read,
  key: read('server-rsa-key.pem'),
  cert: read('server-rsa-cert.pem'),
  ca: read('ca-cert.pem'),
};
