'use strict';

// Progress output: one line rewritten in place on a TTY; on a pipe (CI logs)
// a plain line every few seconds, so logs stay readable and still show that
// the run is alive.

const PLAIN_INTERVAL_MS = 15000;

function fmtTime(ms) {
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

class Progress {
  constructor(total, stream = process.stderr) {
    this.total = total;
    this.stream = stream;
    this.tty = Boolean(stream.isTTY);
    this.start = Date.now();
    this.done = 0;
    this.counts = { pass: 0, fail: 0, skip: 0 };
    this.lastPlain = 0;
    this.lineShown = false;
  }

  line(current) {
    const c = this.counts;
    const head = `[${fmtTime(Date.now() - this.start)}|${String(this.done).padStart(String(this.total).length)}/${this.total}` +
      `|+${c.pass}|-${c.fail}|~${c.skip}]`;
    return current ? `${head} ${current}` : head;
  }

  // Called when a test finishes; `note` (a failure) is printed permanently.
  update(name, status, note) {
    this.done++;
    if (status === 'pass') this.counts.pass++;
    else if (status === 'skip') this.counts.skip++;
    else this.counts.fail++;
    if (note) this.print(note);
    if (this.tty) {
      const cols = this.stream.columns || 100;
      this.stream.write(`\r\x1b[K${this.line(name).slice(0, cols - 1)}`);
      this.lineShown = true;
    } else if (Date.now() - this.lastPlain >= PLAIN_INTERVAL_MS || this.done === this.total) {
      this.lastPlain = Date.now();
      this.stream.write(`${this.line()}\n`);
    }
  }

  print(text) {
    if (this.lineShown) this.stream.write('\r\x1b[K');
    this.stream.write(`${text}\n`);
    this.lineShown = false;
  }

  end() {
    if (this.lineShown) this.stream.write('\n');
    this.lineShown = false;
  }
}

module.exports = { Progress, fmtTime };
