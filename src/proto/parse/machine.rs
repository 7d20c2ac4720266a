//! The head machine's states and what every state shares: the bytes counted toward
//! maxHeaderSize, the runs of skipped bytes, and `run`, which drives the request line
//! (request_line.rs), then the field section (fields.rs).

use super::fields::Field;
use super::request_line::Line;
use super::{HeadParser, Limits, Methods};
use crate::proto::errors::{self, ParseError};

/// Uncounted runs shorter than this stay in the buffer (one blank after a colon is the
/// common case; recording it would cost every header line).
pub(super) const MIN_DROP: usize = 2;

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
