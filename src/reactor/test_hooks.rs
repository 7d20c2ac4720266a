//! A panic on demand, to test that one is contained (`--features test-hooks` only).

use std::cell::RefCell;

thread_local! {
    static PANIC_URL: RefCell<Option<Vec<u8>>> = const { RefCell::new(None) };
}

/// The next request for `url` panics inside the batch that dispatches it.
pub fn arm(url: Vec<u8>) {
    PANIC_URL.with(|p| *p.borrow_mut() = Some(url));
}

pub fn maybe_panic(url: &[u8]) {
    let hit = PANIC_URL.with(|p| {
        let mut p = p.borrow_mut();
        if p.as_deref() == Some(url) {
            *p = None;
            true
        } else {
            false
        }
    });
    if hit {
        panic!("test hook: panic on {}", String::from_utf8_lossy(url));
    }
}
