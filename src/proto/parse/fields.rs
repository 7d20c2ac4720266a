//! Header fields (RFC 9112 §5), as llhttp's header states read them: names, values, the
//! special machines of Content-Length and Transfer-Encoding values, and the empty line that
//! ends the section. Trailer sections (decode.rs) go through the same states.

use super::facts::{
    conn_flags, expects_continue, Special, M_CHUNKED, M_CONTENT_LENGTH, M_EXPECT,
    M_EXPECT_CONTINUE, M_HOST, M_TRANSFER_ENCODING, M_UPGRADE,
};
use super::machine::{Field, St, MIN_DROP};
use super::{HeadParser, Leniency, Limits};
use crate::proto::chars::{self, TOKEN};
use crate::proto::errors::{self, ParseError};

/// The machine reading a special field's value (llhttp's header_value_* states). A
/// Connection value is read as a general one: llhttp's connection states accept the same
/// bytes and fail at the same ones, so its tokens are read when the value is complete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Vm {
    General,
    /// Content-Length: digits, then SP until the line ends.
    Length {
        n: u64,
        blank: bool,
    },
    /// Transfer-Encoding, matching "chunked" (byte `i` next).
    TeChunked(u8),
    /// "chunked" matched: SP may follow; CR makes the coding chunked, `,` fails.
    TeChunkedLast,
    /// Inside another coding.
    TeToken,
    /// Blanks after a `,`.
    TeTokenOws,
}

impl HeadParser {
    /// Runs the field states over `buf`. Ok(true): the section is complete; Ok(false): more
    /// bytes are needed.
    pub(super) fn fields(&mut self, buf: &[u8], limits: &Limits) -> Result<bool, ParseError> {
        loop {
            // Not a field state: the section is done (run() leaves no request-line state
            // for this loop).
            let St::Field(field) = self.st else {
                return Ok(self.st == St::Done);
            };
            self.field_run(field, buf, limits)?;
            let Some(&b) = buf.get(self.pos) else {
                return Ok(false);
            };
            match field {
                Field::HeadersStart => {
                    if b == b' ' {
                        return Err(self.err(errors::UNEXPECTED_SPACE));
                    }
                    self.st = St::Field(Field::LineStart);
                }
                Field::LineStart => match b {
                    b'\r' => {
                        self.pos += 1;
                        self.st = St::Field(Field::EndCr);
                    }
                    b'\n' => return Err(self.err(errors::HEADER_FIELD_CHAR)),
                    b':' => return Err(self.err(errors::INVALID_HEADER_TOKEN)),
                    _ => {
                        self.fields += 1;
                        if self.fields > limits.max_header_fields {
                            return Err(self.err(errors::HEADER_OVERFLOW));
                        }
                        if !self.whole_line(buf, limits) {
                            self.mark = self.pos;
                            self.st = St::Field(Field::Name);
                        }
                    }
                },
                Field::Name => self.name_end(buf, b)?,
                Field::DiscardWs => match b {
                    b' ' | b'\t' => self.pos += 1,
                    b'\r' => {
                        self.pos += 1;
                        self.st = St::Field(Field::DiscardWsCr);
                    }
                    b'\n' => return Err(self.err(errors::INVALID_HEADER_VALUE)),
                    _ => {
                        self.end_skip();
                        self.value_start(limits)?;
                    }
                },
                Field::DiscardWsCr => {
                    if b != b'\n' {
                        return Err(self.err(errors::VALUE_CR_LF));
                    }
                    self.pos += 1;
                    self.st = St::Field(Field::DiscardLws);
                }
                Field::DiscardLws => self.empty_value(b)?,
                Field::Value => self.value_byte(b, limits)?,
                Field::ValueCr => {
                    if b != b'\n' {
                        return Err(self.err(errors::LF_EXPECTED));
                    }
                    self.pos += 1;
                    self.st = St::Field(Field::ValueLws);
                }
                Field::ValueLws => {
                    if b == b' ' || b == b'\t' {
                        return Err(self.err(errors::HEADER_FOLD));
                    }
                    self.value_complete(buf);
                    self.st = St::Field(Field::LineStart);
                }
                Field::EndCr => {
                    if b != b'\n' {
                        return Err(self.err(errors::HEADERS_LF));
                    }
                    self.pos += 1;
                    self.st = St::Done;
                }
            }
        }
    }

    /// The states that read runs of bytes: a name, a general value, blanks before a value.
    #[inline(always)]
    fn field_run(&mut self, field: Field, buf: &[u8], limits: &Limits) -> Result<(), ParseError> {
        match field {
            Field::Name => {
                let n = chars::run(&buf[self.pos.min(buf.len())..], TOKEN);
                self.pos += n;
                self.count(n, limits)?;
            }
            Field::Value if self.vm == Vm::General => {
                let n = value_run(&buf[self.pos.min(buf.len())..], limits.leniency);
                self.pos += n;
                self.count(n, limits)?;
            }
            // A run of skipped bytes.
            Field::DiscardWs => {
                let rest = &buf[self.pos.min(buf.len())..];
                self.pos += rest
                    .iter()
                    .position(|&b| b != b' ' && b != b'\t')
                    .unwrap_or(rest.len());
            }
            _ => {}
        }
        Ok(())
    }

    /// The byte after a CRLF that came before any value byte: the value is empty (a fold
    /// fails).
    fn empty_value(&mut self, b: u8) -> Result<(), ParseError> {
        if b == b' ' || b == b'\t' {
            return Err(self.err(errors::INVALID_HEADER_VALUE));
        }
        match self.special {
            Special::ContentLength => {
                return Err(self.err(errors::EMPTY_CONTENT_LENGTH));
            }
            // llhttp 9.4 (node 24) rejects an empty Transfer-Encoding; 9.3
            // (node 20) ignores it. The stricter answer serves both.
            Special::TransferEncoding => return Err(self.err(errors::EMPTY_TE)),
            Special::Expect => self.flags |= M_EXPECT,
            Special::Host => self.flags |= M_HOST,
            _ => {}
        }
        self.st = St::Field(Field::LineStart);
        Ok(())
    }

    /// A whole `name: value CRLF` line of a field whose value needs no special machine,
    /// followed by a byte that is not a fold, taken in one go (the common case). Returns
    /// false, having changed nothing, for anything else: the state machine takes it.
    fn whole_line(&mut self, buf: &[u8], limits: &Limits) -> bool {
        let start = self.pos;
        let Some(line) = buf.get(start..) else {
            return false;
        };
        let n = chars::run(line, TOKEN);
        if n == 0 || line.get(n) != Some(&b':') {
            return false;
        }
        let special = Special::of(&line[..n]);
        match special {
            Special::TransferEncoding => return false,
            // Plain digits only; anything else, and the framing checks, the machine takes.
            Special::ContentLength
                if self.flags & (M_CONTENT_LENGTH | M_TRANSFER_ENCODING) != 0 =>
            {
                return false;
            }
            _ => {}
        }
        let v = n
            + 1
            + line[n + 1..]
                .iter()
                .position(|&b| b != b' ' && b != b'\t')
                .unwrap_or(line.len() - n - 1);
        let m = value_run(&line[v..], limits.leniency);
        let e = v + m;
        if m == 0
            || line.get(e) != Some(&b'\r')
            || line.get(e + 1) != Some(&b'\n')
            || !matches!(line.get(e + 2), Some(&b) if b != b' ' && b != b'\t')
            || self.counted + n + m >= limits.max_header_size
        {
            return false;
        }
        if special == Special::ContentLength {
            let digits = &line[v..e];
            if digits.len() > 19 || !digits.iter().all(u8::is_ascii_digit) {
                return false;
            }
            self.content_length = digits.iter().fold(0, |n, &d| n * 10 + (d - b'0') as u64);
            self.flags |= M_CONTENT_LENGTH;
        }
        self.counted += n + m;
        if v - (n + 1) >= MIN_DROP {
            self.skips.push((start + n + 1, start + v));
        }
        self.special = special;
        if special == Special::Upgrade {
            self.flags |= M_UPGRADE;
        }
        self.vm = Vm::General;
        self.mark = start + v;
        self.value_end = start + e;
        self.value_complete(buf);
        self.pos = start + e + 2;
        true
    }

    /// The byte after a field name's token run.
    fn name_end(&mut self, buf: &[u8], b: u8) -> Result<(), ParseError> {
        let name = &buf[self.mark..self.pos];
        match b {
            b':' if !name.is_empty() => {
                self.special = Special::of(name);
                // RFC 9112 §6.3: both framings in one message is an error; llhttp checks
                // when the second field's name ends.
                match self.special {
                    Special::TransferEncoding if self.flags & M_CONTENT_LENGTH != 0 => {
                        return Err(self.err(errors::TE_WITH_CL));
                    }
                    Special::ContentLength if self.flags & M_TRANSFER_ENCODING != 0 => {
                        return Err(self.err(errors::CL_WITH_TE));
                    }
                    _ => {}
                }
                self.pos += 1;
                self.skip_start = self.pos;
                self.st = St::Field(Field::DiscardWs);
                Ok(())
            }
            // No whitespace before the colon (RFC 9112 §5.1); llhttp words it by whether
            // the name is one it knows.
            b' ' if Special::of(name).llhttp() => Err(self.err(errors::HEADER_FIELD_CHAR)),
            _ => Err(self.err(errors::INVALID_HEADER_TOKEN)),
        }
    }

    /// The first value byte (llhttp header_value_start).
    fn value_start(&mut self, limits: &Limits) -> Result<(), ParseError> {
        self.mark = self.pos;
        self.vm = match self.special {
            Special::Upgrade => {
                self.flags |= M_UPGRADE;
                Vm::General
            }
            Special::TransferEncoding => {
                // Chunked must be the final coding, applied once (RFC 9112 §6.1): a
                // Transfer-Encoding field after one ending in chunked fails, or with llhttp's
                // LENIENT_TRANSFER_ENCODING the last field's final coding decides.
                if self.flags & M_CHUNKED != 0 {
                    if !limits.leniency.lenient_te() {
                        return Err(self.err(errors::INVALID_TE_VALUE));
                    }
                    self.flags &= !M_CHUNKED;
                }
                self.flags |= M_TRANSFER_ENCODING;
                Vm::TeChunked(0)
            }
            Special::ContentLength => {
                if self.flags & M_CONTENT_LENGTH != 0 {
                    return Err(self.err(errors::DUPLICATE_CONTENT_LENGTH));
                }
                Vm::Length { n: 0, blank: false }
            }
            _ => Vm::General,
        };
        self.st = St::Field(Field::Value);
        Ok(())
    }

    /// One value byte the general run stopped at, or any byte of a special value.
    fn value_byte(&mut self, b: u8, limits: &Limits) -> Result<(), ParseError> {
        let mut vm = self.vm;
        // A special machine may hand the byte on (llhttp's transitions without consuming).
        loop {
            let next = match vm {
                Vm::General => break,
                Vm::Length { n, blank } => match b {
                    b'0'..=b'9' if !blank => Vm::Length {
                        n: n.checked_mul(10)
                            .and_then(|n| n.checked_add((b - b'0') as u64))
                            .ok_or_else(|| self.err(errors::CONTENT_LENGTH_OVERFLOW))?,
                        blank,
                    },
                    // llhttp 9.3 (node 20) allows only SP after the digits, 9.4 (node 24)
                    // HTAB too; SP only serves both.
                    b' ' => Vm::Length { n, blank: true },
                    b'\r' | b'\n' => {
                        self.flags |= M_CONTENT_LENGTH;
                        self.content_length = n;
                        break;
                    }
                    _ => return Err(self.err(errors::INVALID_CONTENT_LENGTH)),
                },
                Vm::TeChunked(i) => {
                    if b.to_ascii_lowercase() == b"chunked"[i as usize] {
                        if i == 6 {
                            Vm::TeChunkedLast
                        } else {
                            Vm::TeChunked(i + 1)
                        }
                    } else {
                        vm = Vm::TeToken;
                        continue;
                    }
                }
                Vm::TeChunkedLast => match b {
                    b' ' => Vm::TeChunkedLast,
                    b'\r' | b'\n' => break,
                    b',' if limits.leniency.lenient_te() => Vm::TeTokenOws,
                    b',' => return Err(self.err(errors::INVALID_TE_VALUE)),
                    _ => {
                        vm = Vm::TeToken;
                        continue;
                    }
                },
                Vm::TeToken => match b {
                    b',' => Vm::TeTokenOws,
                    _ if chars::is(b, chars::VALUE) => Vm::TeToken,
                    _ => {
                        vm = Vm::General;
                        break;
                    }
                },
                Vm::TeTokenOws => match b {
                    b' ' | b'\t' => Vm::TeTokenOws,
                    _ => {
                        vm = Vm::TeChunked(0);
                        continue;
                    }
                },
            };
            self.vm = next;
            self.pos += 1;
            return self.count(1, limits);
        }
        // `b` ends the value (or, in a general value, is not a value byte).
        self.vm = vm;
        match b {
            b'\r' => {
                self.value_end = self.pos;
                self.pos += 1;
                self.st = St::Field(Field::ValueCr);
                Ok(())
            }
            b'\n' => Err(self.err(errors::CR_EXPECTED)),
            // A control character a special machine handed on: llhttp's relaxed (and lenient)
            // value state takes it and goes back to its general value state, so the field's
            // facts are not set.
            _ if b != 0 && limits.leniency.relaxed_values() => {
                self.vm = Vm::General;
                self.pos += 1;
                self.count(1, limits)
            }
            _ => Err(self.err(errors::INVALID_HEADER_VALUE)),
        }
    }

    /// A value and its CRLF are complete and no fold follows (llhttp setHeaderFlags).
    fn value_complete(&mut self, buf: &[u8]) {
        match (self.special, self.vm) {
            (Special::TransferEncoding, Vm::TeChunkedLast) => self.flags |= M_CHUNKED,
            (Special::Connection, _) => {
                self.flags |= conn_flags(buf.get(self.mark..self.value_end).unwrap_or(&[]));
            }
            (Special::Expect, _) => {
                self.flags |= M_EXPECT;
                if expects_continue(buf.get(self.mark..self.value_end).unwrap_or(&[])) {
                    self.flags |= M_EXPECT_CONTINUE;
                }
            }
            (Special::Host, _) => self.flags |= M_HOST,
            _ => {}
        }
        self.vm = Vm::General;
    }
}

/// The value bytes at the start of `s`: llhttp's HEADER_CHARS, or with relaxed values any byte
/// but NUL, CR and LF (llhttp RELAXED_HEADER_CHARS).
fn value_run(s: &[u8], leniency: Leniency) -> usize {
    if leniency.relaxed_values() {
        s.iter()
            .position(|&b| matches!(b, b'\r' | b'\n' | 0))
            .unwrap_or(s.len())
    } else {
        chars::value_run(s)
    }
}
