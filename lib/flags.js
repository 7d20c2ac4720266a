'use strict';
// The bit flags JS and the addon exchange, one list for all of lib/. Each mirrors a Rust
// constant: F_* src/proto/parse.rs (request facts), R_* src/proto/encode.rs (how to write a
// response), S_* src/reactor.rs (server settings).

module.exports = {
  F_HTTP11: 1,
  F_KEEP_ALIVE: 1 << 1,
  F_UPGRADE: 1 << 2,
  F_EXPECT_CONTINUE: 1 << 3,
  F_EXPECT_OTHER: 1 << 4,
  F_BODY_DONE: 1 << 6,
  F_HOST: 1 << 7,
  F_CONNECT: 1 << 8,

  R_DATE: 1,
  R_CONN_KEEP_ALIVE: 1 << 1,
  R_CONN_CLOSE: 1 << 2,
  R_CONTENT_LENGTH: 1 << 3,
  R_CHUNKED: 1 << 4,
  R_NO_BODY: 1 << 5,
  R_CLOSE_AFTER: 1 << 6,
  R_KA_TIMEOUT: 1 << 7,
  R_FRAME: 1 << 9,
  R_TENTATIVE: 1 << 10,
  R_UTF8_HEAD: 1 << 11,

  S_HAS_CONNECTION: 1,
  S_HAS_TIMEOUT: 1 << 2,
  S_HAS_UPGRADE: 1 << 3,
  S_HAS_CONNECT: 1 << 4,
  S_NO_DELAY: 1 << 5,
  S_KEEP_ALIVE: 1 << 6,
  S_HALF_OPEN: 1 << 7,
  S_LENIENT: 1 << 8,
};
