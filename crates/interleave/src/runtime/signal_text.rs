//! Text for signal handlers: a fixed buffer that collects a message without allocating, and a
//! raw write of it to stderr. A handler that interrupted the program may not allocate, take a
//! lock (stderr's included) or format through anything that could, so the stack-overflow
//! report (`guard.rs`) and the watchdog's report from the hung thread (`watchdog.rs`) build
//! their messages here from `&str` pieces and numbers.

/// A message of at most `N` bytes; whatever does not fit is dropped.
pub(crate) struct Text<const N: usize> {
    bytes: [u8; N],
    len: usize,
}

impl<const N: usize> Text<N> {
    pub(crate) const fn new() -> Self {
        Text {
            bytes: [0; N],
            len: 0,
        }
    }

    /// Appends `text`, cut at the end of the buffer.
    pub(crate) fn push(&mut self, text: &str) -> &mut Self {
        let room = N - self.len;
        let take = text.len().min(room);
        self.bytes[self.len..self.len + take].copy_from_slice(&text.as_bytes()[..take]);
        self.len += take;
        self
    }

    /// Appends `value` in decimal.
    pub(crate) fn number(&mut self, mut value: u64) -> &mut Self {
        let mut digits = [0u8; 20];
        let mut start = digits.len();
        loop {
            start -= 1;
            digits[start] = b'0' + (value % 10) as u8;
            value /= 10;
            if value == 0 {
                break;
            }
        }
        // The digits are ASCII, so this cannot fail.
        let text = std::str::from_utf8(&digits[start..]).unwrap_or("?");
        self.push(text)
    }

    /// Appends `file:line:column`.
    #[cfg_attr(not(any(target_os = "linux", target_os = "android")), allow(dead_code))]
    pub(crate) fn site(&mut self, site: &std::panic::Location<'_>) -> &mut Self {
        self.push(site.file())
            .push(":")
            .number(u64::from(site.line()))
            .push(":")
            .number(u64::from(site.column()))
    }

    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

/// Writes `bytes` to file descriptor 2 with `write(2)`, which is async-signal-safe, retrying
/// short writes and interruptions; gives up silently on any other error.
pub(crate) fn write_stderr(mut bytes: &[u8]) {
    #[cfg(unix)]
    while !bytes.is_empty() {
        // SAFETY: `bytes` is a valid buffer of `bytes.len()` bytes for the duration of the call.
        let written = unsafe { libc::write(2, bytes.as_ptr().cast(), bytes.len()) };
        if written > 0 {
            bytes = &bytes[written as usize..];
        } else if written < 0
            && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
        {
            continue;
        } else {
            return;
        }
    }
    #[cfg(not(unix))]
    {
        use std::io::Write;
        let _ = std::io::stderr().write_all(bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_and_numbers_make_a_message_cut_at_the_buffer_end() {
        let mut text = Text::<32>::new();
        text.push("step ").number(0).push(", ").number(u64::MAX);
        assert_eq!(text.as_bytes(), b"step 0, 18446744073709551615");
        text.push(" and more than fits");
        assert_eq!(text.as_bytes().len(), 32);
    }
}
