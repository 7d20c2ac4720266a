//! Parse errors named and worded like llhttp's, so `clientError` handlers see the same
//! `err.code` / `err.reason` as on node:http. Each reason is the text of the llhttp state
//! that fails (llhttp `src/llhttp/http.ts` and `url.ts`).

/// An HTTP parse error: llhttp's error name (`HPE_*`) and reason text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParseError {
    pub code: &'static str,
    pub reason: &'static str,
    /// Where in the parsed bytes the error was found (node's `err.bytesParsed` when the
    /// message arrived in one read).
    pub at: usize,
}

impl ParseError {
    pub const fn new(code: &'static str, reason: &'static str) -> Self {
        ParseError {
            code,
            reason,
            at: 0,
        }
    }

    pub const fn at(self, at: usize) -> Self {
        ParseError { at, ..self }
    }
}

/// The status node:http answers a parse error with when no 'clientError' listener handles
/// it (`socketOnError` in lib/_http_server.js), by error code; JS writes that response.
pub const CLIENT_ERROR_STATUS: &[(&str, u16)] = &[
    ("HPE_HEADER_OVERFLOW", 431),
    ("HPE_CHUNK_EXTENSIONS_OVERFLOW", 413),
];
/// The status of the other parse errors.
pub const DEFAULT_CLIENT_ERROR_STATUS: u16 = 400;

const fn e(code: &'static str, reason: &'static str) -> ParseError {
    ParseError::new(code, reason)
}

// Request line.
/// A request callback threw (llhttp's error when on_headers_complete returns -1).
pub const CB_HEADERS_COMPLETE: ParseError = e("HPE_CB_HEADERS_COMPLETE", "User callback error");
/// A body callback threw (node sets llhttp's HPE_USER with this code and reason).
pub const JS_EXCEPTION: ParseError = e("HPE_JS_EXCEPTION", "JS Exception");
pub const INVALID_METHOD: ParseError = e("HPE_INVALID_METHOD", "Invalid method encountered");
pub const METHOD_SPACE: ParseError = e("HPE_INVALID_METHOD", "Expected space after method");
pub const INVALID_URL: ParseError = e("HPE_INVALID_URL", "Invalid characters in url");
pub const URL_START: ParseError = e("HPE_INVALID_URL", "Unexpected start char in url");
pub const URL_SCHEMA: ParseError = e("HPE_INVALID_URL", "Unexpected char in url schema");
pub const URL_SERVER: ParseError = e("HPE_INVALID_URL", "Unexpected char in url server");
pub const URL_PATH: ParseError = e("HPE_INVALID_URL", "Invalid char in url path");
pub const URL_QUERY: ParseError = e("HPE_INVALID_URL", "Invalid char in url query");
pub const URL_FRAGMENT: ParseError = e("HPE_INVALID_URL", "Invalid char in url fragment start");
pub const URL_CRLF: ParseError = e("HPE_INVALID_URL", "Expected CRLF");
pub const INVALID_CONSTANT: ParseError = e("HPE_INVALID_CONSTANT", "Expected HTTP/, RTSP/ or ICE/");
pub const HTTP_METHOD: ParseError = e(
    "HPE_INVALID_CONSTANT",
    "Invalid method for HTTP/x.x request",
);
pub const RTSP_METHOD: ParseError = e(
    "HPE_INVALID_CONSTANT",
    "Invalid method for RTSP/x.x request",
);
pub const ICE_METHOD: ParseError = e(
    "HPE_INVALID_CONSTANT",
    "Expected SOURCE method for ICE/x.x request",
);
pub const MAJOR_VERSION: ParseError = e("HPE_INVALID_VERSION", "Invalid major version");
pub const VERSION_DOT: ParseError = e("HPE_INVALID_VERSION", "Expected dot");
pub const MINOR_VERSION: ParseError = e("HPE_INVALID_VERSION", "Invalid minor version");
pub const INVALID_VERSION: ParseError = e("HPE_INVALID_VERSION", "Invalid HTTP version");
pub const VERSION_CRLF: ParseError = e("HPE_INVALID_VERSION", "Expected CRLF after version");
pub const VERSION_LF: ParseError = e("HPE_STRICT", "Expected CRLF after version");
pub const H2_PREFACE: ParseError = e("HPE_INVALID_VERSION", "Expected HTTP/2 Connection Preface");
pub const H2_UPGRADE: ParseError = e("HPE_PAUSED_H2_UPGRADE", "Pause on PRI/Upgrade");

// Header (and trailer) fields.
pub const UNEXPECTED_SPACE: ParseError =
    e("HPE_UNEXPECTED_SPACE", "Unexpected space after start line");
pub const INVALID_HEADER_TOKEN: ParseError = e("HPE_INVALID_HEADER_TOKEN", "Invalid header token");
pub const HEADER_FIELD_CHAR: ParseError =
    e("HPE_INVALID_HEADER_TOKEN", "Invalid header field char");
pub const INVALID_HEADER_VALUE: ParseError =
    e("HPE_INVALID_HEADER_TOKEN", "Invalid header value char");
pub const HEADER_FOLD: ParseError = e(
    "HPE_INVALID_HEADER_TOKEN",
    "Unexpected whitespace after header value",
);
pub const VALUE_CR_LF: ParseError = e("HPE_STRICT", "Expected LF after CR");
pub const HEADERS_LF: ParseError = e("HPE_STRICT", "Expected LF after headers");
pub const CR_EXPECTED: ParseError = e("HPE_CR_EXPECTED", "Missing expected CR after header value");
pub const LF_EXPECTED: ParseError = e("HPE_LF_EXPECTED", "Missing expected LF after header value");
pub const HEADER_OVERFLOW: ParseError = e("HPE_HEADER_OVERFLOW", "Header overflow");
pub const INVALID_CONTENT_LENGTH: ParseError = e(
    "HPE_INVALID_CONTENT_LENGTH",
    "Invalid character in Content-Length",
);
pub const EMPTY_CONTENT_LENGTH: ParseError =
    e("HPE_INVALID_CONTENT_LENGTH", "Empty Content-Length");
pub const CONTENT_LENGTH_OVERFLOW: ParseError =
    e("HPE_INVALID_CONTENT_LENGTH", "Content-Length overflow");
pub const DUPLICATE_CONTENT_LENGTH: ParseError =
    e("HPE_UNEXPECTED_CONTENT_LENGTH", "Duplicate Content-Length");
pub const CL_WITH_TE: ParseError = e(
    "HPE_INVALID_CONTENT_LENGTH",
    "Content-Length can't be present with Transfer-Encoding",
);
pub const TE_WITH_CL: ParseError = e(
    "HPE_INVALID_TRANSFER_ENCODING",
    "Transfer-Encoding can't be present with Content-Length",
);
pub const INVALID_TE: ParseError = e(
    "HPE_INVALID_TRANSFER_ENCODING",
    "Request has invalid `Transfer-Encoding`",
);
pub const INVALID_TE_VALUE: ParseError = e(
    "HPE_INVALID_TRANSFER_ENCODING",
    "Invalid `Transfer-Encoding` header value",
);
pub const EMPTY_TE: ParseError = e("HPE_INVALID_TRANSFER_ENCODING", "Empty Transfer-Encoding");

// Chunked bodies.
pub const INVALID_CHUNK_SIZE: ParseError =
    e("HPE_INVALID_CHUNK_SIZE", "Invalid character in chunk size");
pub const CHUNK_SIZE_OVERFLOW: ParseError = e("HPE_INVALID_CHUNK_SIZE", "Chunk size overflow");
pub const CHUNK_SIZE_CR: ParseError = e("HPE_CR_EXPECTED", "Missing expected CR after chunk size");
pub const CHUNK_SIZE_LF: ParseError = e("HPE_STRICT", "Expected LF after chunk size");
pub const CHUNK_EXTENSIONS: ParseError = e("HPE_STRICT", "Invalid character in chunk extensions");
pub const CHUNK_EXT_NAME: ParseError =
    e("HPE_STRICT", "Invalid character in chunk extensions name");
pub const CHUNK_EXT_NAME_CR: ParseError = e(
    "HPE_CR_EXPECTED",
    "Missing expected CR after chunk extension name",
);
pub const CHUNK_EXT_VALUE: ParseError =
    e("HPE_STRICT", "Invalid character in chunk extensions value");
pub const CHUNK_EXT_VALUE_CR: ParseError = e(
    "HPE_CR_EXPECTED",
    "Missing expected CR after chunk extension value",
);
pub const CHUNK_EXT_QUOTED: ParseError = e(
    "HPE_STRICT",
    "Invalid character in chunk extensions quoted value",
);
pub const CHUNK_EXT_QUOTED_PAIR: ParseError = e(
    "HPE_STRICT",
    "Invalid quoted-pair in chunk extensions quoted value",
);
pub const CHUNK_EXT_AFTER_QUOTE: ParseError = e(
    "HPE_STRICT",
    "Invalid character in chunk extensions quote value",
);
pub const CHUNK_EXTENSIONS_OVERFLOW: ParseError =
    e("HPE_CHUNK_EXTENSIONS_OVERFLOW", "Chunk extensions overflow");
pub const CHUNK_DATA_CR: ParseError = e("HPE_CR_EXPECTED", "Missing expected CR after chunk data");
pub const CHUNK_DATA_LF: ParseError = e("HPE_STRICT", "Expected LF after chunk data");

// Connection.
pub const DATA_AFTER_CLOSE: ParseError =
    e("HPE_CLOSED_CONNECTION", "Data after `Connection: close`");
pub const INVALID_EOF_STATE: ParseError = e("HPE_INVALID_EOF_STATE", "Invalid EOF state");
