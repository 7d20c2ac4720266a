//! Parse errors named and worded like llhttp's, so `clientError` handlers see the same
//! `err.code` / `err.reason` as on node:http.

/// An HTTP parse error: llhttp's error name (`HPE_*`) and reason text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParseError {
    pub code: &'static str,
    pub reason: &'static str,
    /// Where in the message the error was found (node's `err.bytesParsed`), when known.
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

    /// The status node:http answers with when no 'clientError' listener handles the error
    /// (`socketOnError` in lib/_http_server.js).
    pub fn status(&self) -> u16 {
        match self.code {
            "HPE_HEADER_OVERFLOW" => 431,
            "HPE_CHUNK_EXTENSIONS_OVERFLOW" => 413,
            _ => 400,
        }
    }
}

pub const INVALID_METHOD: ParseError =
    ParseError::new("HPE_INVALID_METHOD", "Invalid method encountered");
pub const INVALID_URL: ParseError = ParseError::new("HPE_INVALID_URL", "Invalid characters in url");
pub const INVALID_VERSION: ParseError =
    ParseError::new("HPE_INVALID_VERSION", "Invalid HTTP version");
pub const INVALID_CONSTANT: ParseError = ParseError::new("HPE_INVALID_CONSTANT", "Expected HTTP/");
pub const INVALID_HEADER_TOKEN: ParseError =
    ParseError::new("HPE_INVALID_HEADER_TOKEN", "Invalid header token");
pub const INVALID_HEADER_VALUE: ParseError =
    ParseError::new("HPE_INVALID_HEADER_TOKEN", "Invalid header value char");
pub const CR_EXPECTED: ParseError =
    ParseError::new("HPE_CR_EXPECTED", "Missing expected CR after header value");
pub const LF_EXPECTED: ParseError = ParseError::new("HPE_LF_EXPECTED", "Expected LF after CR");
pub const HEADER_OVERFLOW: ParseError = ParseError::new("HPE_HEADER_OVERFLOW", "Header overflow");
pub const INVALID_CONTENT_LENGTH: ParseError = ParseError::new(
    "HPE_INVALID_CONTENT_LENGTH",
    "Invalid character in Content-Length",
);
pub const EMPTY_CONTENT_LENGTH: ParseError =
    ParseError::new("HPE_INVALID_CONTENT_LENGTH", "Empty Content-Length");
pub const CONTENT_LENGTH_OVERFLOW: ParseError =
    ParseError::new("HPE_INVALID_CONTENT_LENGTH", "Content-Length overflow");
pub const DUPLICATE_CONTENT_LENGTH: ParseError =
    ParseError::new("HPE_UNEXPECTED_CONTENT_LENGTH", "Duplicate Content-Length");
pub const CL_WITH_TE: ParseError = ParseError::new(
    "HPE_INVALID_CONTENT_LENGTH",
    "Content-Length can't be present with Transfer-Encoding",
);
pub const TE_WITH_CL: ParseError = ParseError::new(
    "HPE_INVALID_TRANSFER_ENCODING",
    "Transfer-Encoding can't be present with Content-Length",
);
pub const INVALID_TE: ParseError = ParseError::new(
    "HPE_INVALID_TRANSFER_ENCODING",
    "Request has invalid `Transfer-Encoding`",
);
pub const INVALID_TE_VALUE: ParseError = ParseError::new(
    "HPE_INVALID_TRANSFER_ENCODING",
    "Invalid `Transfer-Encoding` header value",
);
pub const INVALID_CHUNK_SIZE: ParseError =
    ParseError::new("HPE_INVALID_CHUNK_SIZE", "Invalid character in chunk size");
pub const CHUNK_SIZE_OVERFLOW: ParseError =
    ParseError::new("HPE_INVALID_CHUNK_SIZE", "Chunk size overflow");
pub const CHUNK_EXTENSIONS: ParseError =
    ParseError::new("HPE_STRICT", "Invalid character in chunk extensions");
pub const CHUNK_EXTENSIONS_OVERFLOW: ParseError =
    ParseError::new("HPE_CHUNK_EXTENSIONS_OVERFLOW", "Chunk extensions overflow");
pub const CHUNK_DATA_LF: ParseError = ParseError::new("HPE_STRICT", "Expected LF after chunk data");
pub const CHUNK_SIZE_CR: ParseError =
    ParseError::new("HPE_CR_EXPECTED", "Missing expected CR after chunk size");
pub const UNEXPECTED_SPACE: ParseError =
    ParseError::new("HPE_UNEXPECTED_SPACE", "Unexpected space after start line");
pub const DATA_AFTER_CLOSE: ParseError =
    ParseError::new("HPE_CLOSED_CONNECTION", "Data after `Connection: close`");
pub const INVALID_EOF_STATE: ParseError =
    ParseError::new("HPE_INVALID_EOF_STATE", "Invalid EOF state");
