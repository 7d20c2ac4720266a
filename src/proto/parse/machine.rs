//! The head machine's states (the request line's and the field section's, defined here so
//! that the files stepping through them depend on this one alone) and what every state
//! shares: the bytes counted toward maxHeaderSize, the runs of skipped bytes, and `run`,
//! which drives the request line (request_line.rs), then the field section (fields.rs).

use super::{HeadParser, Limits, Methods};
use crate::proto::errors::{self, ParseError};

/// Uncounted runs shorter than this stay in the buffer (one blank after a colon is the
/// common case; recording it would cost every header line).
pub(super) const MIN_DROP: usize = 2;

/// The states of the request line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Line {
    /// CR and LF before the method (llhttp `start`).
    Start,
    Method,
    /// Spaces after the method's mandatory one.
    SpacesBeforeUrl,
    Url(UrlSt),
    /// CR right after the request target: LF makes an HTTP/0.9 request line.
    UrlCr,
    /// The byte after the request target's SP (or after an HTTP/0.9 line's end): llhttp
    /// reads it in a URL state, where HTAB and FF fail as invalid URL characters. Then
    /// `next`.
    AfterUrl {
        http09: bool,
    },
    /// Spaces after the request target's mandatory one.
    SpacesBeforeProtocol,
    /// `HTTP`, `RTSP` or `ICE` (index in PROTOCOLS), `i` bytes matched, then `/`.
    Protocol {
        p: u8,
        i: u8,
    },
    Major,
    Dot,
    Minor,
    VersionEnd,
    VersionCr,
    /// After `PRI * HTTP/2.0`: the rest of the HTTP/2 preface (`i` bytes matched).
    Pri(u8),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum UrlSt {
    Start,
    Schema,
    /// After `scheme:`, `n` slashes seen.
    Slashes(u8),
    Server,
    Path,
    Query,
    Fragment,
}

/// The states of the field section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Field {
    /// The first byte after the request line.
    HeadersStart,
    /// The first byte of a field line, or of the empty line that ends the section.
    LineStart,
    Name,
    /// Blanks before a value.
    DiscardWs,
    DiscardWsCr,
    /// CRLF before any value byte: the value is empty unless a fold follows.
    DiscardLws,
    Value,
    ValueCr,
    /// After a value's CRLF: SP or HTAB here is a fold.
    ValueLws,
    /// CR of the empty line that ends the section.
    EndCr,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum St {
    Line(Line),
    Field(Field),
    Done,
}

impl HeadParser {
    pub(super) fn skipping(&self) -> bool {
        matches!(
            self.st,
            St::Line(Line::Start | Line::SpacesBeforeUrl | Line::SpacesBeforeProtocol)
                | St::Field(Field::DiscardWs)
        )
    }

    /// Ends a run of skipped bytes at `pos`.
    pub(super) fn end_skip(&mut self) {
        if self.pos - self.skip_start >= MIN_DROP {
            self.skips.push((self.skip_start, self.pos));
        }
    }

    /// Counts `n` bytes toward maxHeaderSize (node's TrackHeader: fails when the count
    /// reaches the limit). Counting as bytes are read, not when a token ends, keeps the
    /// outcome independent of how reads split.
    #[inline]
    pub(super) fn count(&mut self, n: usize, limits: &Limits) -> Result<(), ParseError> {
        self.counted += n;
        if self.counted >= limits.max_header_size {
            return Err(errors::HEADER_OVERFLOW.at(self.pos));
        }
        Ok(())
    }

    pub(super) fn err(&self, e: ParseError) -> ParseError {
        e.at(self.pos)
    }

    /// Runs the machine over `buf`. Ok(true): the head (or trailer section) is complete.
    pub(super) fn run(
        &mut self,
        buf: &[u8],
        methods: &Methods,
        limits: &Limits,
    ) -> Result<bool, ParseError> {
        if self.pos > buf.len() {
            // Fewer bytes than the last call saw: not the contract, but what is there is
            // still a message start (compaction drops only skippable bytes), so read it anew.
            *self = if self.trailers {
                HeadParser::for_trailers()
            } else {
                HeadParser::default()
            };
        }
        // One loop per phase rather than one call per state: a state's arm that ends at its
        // loop's back edge lets the compiler go straight to the next state's code (a call
        // per state made short heads about 20 % slower).
        if matches!(self.st, St::Line(_)) && !self.request_line(buf, methods, limits)? {
            return Ok(false);
        }
        self.fields(buf, limits)
    }
}
