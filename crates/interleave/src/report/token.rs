//! Replay tokens: a printable, versioned encoding of one execution's schedule.
//!
//! A token holds the thread chosen at every step (run-length encoded), the values returned by
//! `interleave::rand`, the settings that change what an execution does (the race mode and the
//! step bound), the kind of failure it reproduces, fingerprints of the operations the program
//! performed (one over the whole execution and one per block of [`BLOCK`] steps, so a replay
//! that diverges can say where), the test that recorded it (so `INTERLEAVE_REPLAY` replays it
//! only there) and the first line of the failure's message (so a divergence can still say what
//! the recorded execution found). A checksum catches truncated or mangled tokens.
//!
//! The fingerprints cover what the program did, not where its source sits: each step's thread,
//! operation, and the kind and creation index of its object. An edit that adds a line, a log
//! statement or a comment above the failing code, or moves the test, leaves a token valid; one
//! that changes the sequence of operations (a new lock, one more atomic access) does not.
//!
//! Layout: `il2-` followed by URL-safe base64 (no padding) of
//! `varint(runs) (varint(thread) varint(length))* varint(values) varint(value)* u8(settings)
//! varint(step bound) u8(failure) u64(fingerprint) varint(blocks) u16(block)* varint(test
//! length) test varint(message length) message u32(checksum)`, the texts in UTF-8 and empty when
//! absent. The settings byte holds, from its lowest bit, the race mode, spurious wakeups, the
//! weak memory model, `panic_stops_execution`, spurious park wakeups, spurious compare-exchange
//! failures and loom's yield rule.
//!
//! A long schedule repeats itself (a spin loop that alternates two threads for 100,000 steps
//! made 197,428 characters, more than one environment variable may hold), so a payload that
//! deflate shortens by a quarter or more is written as `il3-` followed by the base64 of the
//! deflated payload (checksum included); a short one stays `il2-`, and both are read.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use thiserror::Error;

use super::FailureKind;
use crate::runtime::{Event, Recording};
use crate::runtime::{MemoryModel, RaceMode, YieldVisibility};
use crate::strategy::replay::runs;

const PREFIX: &str = "il";
const VERSION: u32 = 2;
/// The version of a token whose payload is deflated; the payload is version 2's.
const DEFLATED_VERSION: u32 = 3;

/// Payloads shorter than this are never deflated: the saving would be a few characters.
const DEFLATE_FROM: usize = 256;

/// The most bytes a deflated payload may inflate to: deflate shrinks at most about a
/// thousandfold, and no environment variable holds more than 128 KiB, so a real token stays far
/// below; a forged one cannot make the decoder allocate more.
const INFLATED_LIMIT: usize = 256 << 20;

/// The longest message prefix a token keeps, in bytes.
const MESSAGE_BYTES: usize = 80;

/// Steps per block fingerprint.
pub(crate) const BLOCK: usize = 64;

/// Why a replay token could not be decoded.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum TokenError {
    /// The text does not start with `il<version>-`.
    #[error(
        "not an interleave replay token: it should start with \"il{VERSION}-\" or \
         \"il{DEFLATED_VERSION}-\" (got {0:?})"
    )]
    NotAToken(String),
    /// The token was made by a different version of the format.
    #[error(
        "replay token format version {0} is not supported by this version of interleave \
         (it reads versions {VERSION} and {DEFLATED_VERSION}); re-run the exploration to get a \
         fresh token"
    )]
    UnsupportedVersion(u32),
    /// The body is not valid base64.
    #[error(
        "the replay token is corrupted: it has a character or an end that no token has ({0}); \
         copy the whole token again"
    )]
    Encoding(String),
    /// The body decoded but its checksum does not match: the token was truncated or edited.
    #[error("the replay token is corrupted: its checksum does not match (was it truncated when copied?)")]
    Checksum,
    /// The body ended early or has trailing bytes.
    #[error("the replay token is malformed: {0}")]
    Malformed(&'static str),
}

/// A decoded schedule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Token {
    /// The thread chosen at every step, as runs of (thread, number of steps). The runs are
    /// never expanded: a run length is a number read from the token, and a token of a few
    /// bytes may claim more steps than any memory holds.
    pub runs: Vec<(u32, u64)>,
    pub values: Vec<u64>,
    pub races: RaceMode,
    /// Waits could end spuriously (`Config::spurious_wakeups`): it changes which threads can
    /// run, so a replay needs it. Stored in the race-mode byte's second bit, which tokens
    /// written before the setting existed leave clear.
    pub spurious_wakeups: bool,
    /// A thread's own parks could end spuriously (`Config::spurious_park_wakeups`); the fifth
    /// bit of the race-mode byte, clear in tokens written before the setting existed.
    pub spurious_park_wakeups: bool,
    /// `compare_exchange_weak` could fail spuriously (`Config::spurious_cas_failures`): the
    /// sixth bit of the race-mode byte, clear in tokens written before the setting existed,
    /// which ran without such failures.
    pub spurious_cas_failures: bool,
    /// The memory model atomics ran under: the weak model reads stores that the
    /// sequentially consistent one never does. Stored in the third bit of the race-mode byte,
    /// set for the weak model, which tokens written before the weak model existed leave clear.
    pub memory: MemoryModel,
    /// Which stores loads may read after a yield (`Config::yield_visibility`): it changes the
    /// choices of stores a replay meets. Stored in the seventh bit of the race-mode byte, which
    /// tokens written before the setting existed leave clear.
    pub yield_visibility: YieldVisibility,
    /// Panics stopped the execution (`Config::panic_stops_execution`): it ends the execution
    /// earlier, so a replay needs it. Stored in the fourth bit of the race-mode byte, which
    /// tokens written before the setting existed leave clear.
    pub panic_stops_execution: bool,
    /// A spawned thread's panic failed the execution (`Config::spawned_panics_fail`): it ends
    /// the execution earlier, so a replay needs it. Stored in the eighth bit of the race-mode
    /// byte, which tokens written before the setting existed leave clear.
    pub spawned_panics_fail: bool,
    pub max_steps: u64,
    pub failure: Option<FailureKind>,
    pub fingerprint: u64,
    pub blocks: Vec<u16>,
    /// The name of the test whose exploration recorded the token (the test harness's thread
    /// name), when it ran in one.
    pub test: Option<String>,
    /// The first line of the recorded failure's message, at most [`MESSAGE_BYTES`] long.
    pub message: Option<String>,
}

impl Token {
    pub fn from_run(ex: &Recording, failure: Option<FailureKind>) -> Token {
        Token {
            runs: runs(ex.events.iter().map(|e| e.thread)),
            values: ex.values.clone(),
            races: ex.limits.races,
            spurious_wakeups: ex.limits.spurious_wakeups,
            spurious_park_wakeups: ex.limits.spurious_park_wakeups,
            spurious_cas_failures: ex.limits.spurious_cas_failures,
            memory: ex.limits.memory,
            yield_visibility: ex.limits.yield_visibility,
            panic_stops_execution: ex.limits.panic_stops_execution,
            spawned_panics_fail: ex.limits.spawned_panics_fail,
            max_steps: ex.limits.max_steps,
            failure,
            fingerprint: fingerprint(ex),
            blocks: block_fingerprints(ex),
            test: None,
            message: None,
        }
    }

    /// The token with the test that recorded it and the failure's message, cut to its first
    /// line and at most [`MESSAGE_BYTES`] bytes.
    pub fn labelled(mut self, test: Option<&str>, message: &str) -> Token {
        self.test = test.map(str::to_string);
        let line = message.lines().next().unwrap_or_default().trim();
        let mut end = line.len().min(MESSAGE_BYTES);
        while !line.is_char_boundary(end) {
            end -= 1;
        }
        self.message = (!line.is_empty()).then(|| line[..end].to_string());
        self
    }

    pub fn encode(&self) -> String {
        let mut out = Vec::new();
        put_varint(&mut out, self.runs.len() as u64);
        for &(thread, length) in &self.runs {
            put_varint(&mut out, u64::from(thread));
            put_varint(&mut out, length);
        }
        put_varint(&mut out, self.values.len() as u64);
        for &value in &self.values {
            put_varint(&mut out, value);
        }
        let races = match self.races {
            RaceMode::Fail => 0,
            RaceMode::Warn => 1,
        };
        let weak = self.memory == MemoryModel::Weak;
        let unseen = self.yield_visibility == YieldVisibility::UnseenBeforeYield;
        out.push(
            races
                | u8::from(self.spurious_wakeups) << 1
                | u8::from(weak) << 2
                | u8::from(self.panic_stops_execution) << 3
                | u8::from(self.spurious_park_wakeups) << 4
                | u8::from(self.spurious_cas_failures) << 5
                | u8::from(unseen) << 6
                | u8::from(self.spawned_panics_fail) << 7,
        );
        put_varint(&mut out, self.max_steps);
        out.push(self.failure.map_or(0, FailureKind::code));
        out.extend_from_slice(&self.fingerprint.to_le_bytes());
        put_varint(&mut out, self.blocks.len() as u64);
        for block in &self.blocks {
            out.extend_from_slice(&block.to_le_bytes());
        }
        for text in [&self.test, &self.message] {
            let text = text.as_deref().unwrap_or_default();
            put_varint(&mut out, text.len() as u64);
            out.extend_from_slice(text.as_bytes());
        }
        let checksum = fnv1a(&out) as u32;
        out.extend_from_slice(&checksum.to_le_bytes());
        if out.len() >= DEFLATE_FROM {
            let deflated = miniz_oxide::deflate::compress_to_vec(&out, 9);
            if deflated.len() <= out.len() / 4 * 3 {
                return format!(
                    "{PREFIX}{DEFLATED_VERSION}-{}",
                    URL_SAFE_NO_PAD.encode(deflated)
                );
            }
        }
        format!("{PREFIX}{VERSION}-{}", URL_SAFE_NO_PAD.encode(out))
    }

    /// The number of steps the schedule records.
    pub fn steps(&self) -> u64 {
        // Decoding refuses runs whose lengths overflow, so the sum fits.
        self.runs.iter().map(|&(_, length)| length).sum()
    }

    pub fn decode(text: &str) -> Result<Token, TokenError> {
        let text = text.trim();
        let not_a_token = || TokenError::NotAToken(text.chars().take(12).collect());
        let rest = text.strip_prefix(PREFIX).ok_or_else(not_a_token)?;
        let (version, body) = rest.split_once('-').ok_or_else(not_a_token)?;
        // Only the canonical spelling names a version: `u32`'s parser would also take `+1` and
        // `0001`, which no encoder writes, so such text is not a token of this format.
        let canonical = !version.is_empty()
            && version.bytes().all(|b| b.is_ascii_digit())
            && (version == "0" || !version.starts_with('0'));
        if !canonical {
            return Err(not_a_token());
        }
        let version: u32 = version.parse().map_err(|_| not_a_token())?;
        if version != VERSION && version != DEFLATED_VERSION {
            return Err(TokenError::UnsupportedVersion(version));
        }
        let mut bytes = URL_SAFE_NO_PAD
            .decode(body)
            .map_err(|e| TokenError::Encoding(e.to_string()))?;
        if version == DEFLATED_VERSION {
            bytes = miniz_oxide::inflate::decompress_to_vec_with_limit(&bytes, INFLATED_LIMIT)
                .map_err(|_| {
                    TokenError::Malformed(
                        "its compressed schedule does not decompress (was it truncated when \
                         copied?)",
                    )
                })?;
        }
        if bytes.len() < 4 {
            return Err(TokenError::Malformed("it is too short"));
        }
        let (payload, checksum) = bytes.split_at(bytes.len() - 4);
        if fnv1a(payload) as u32 != u32::from_le_bytes(checksum.try_into().expect("4 bytes")) {
            return Err(TokenError::Checksum);
        }
        let mut reader = Reader { bytes: payload };
        // Every count is checked against the bytes left before anything is allocated for it:
        // a run takes at least two bytes, a value one, a block fingerprint two.
        let count = reader.count(2, "it claims more runs than it has bytes for")?;
        let mut runs = Vec::with_capacity(count);
        let mut steps = 0u64;
        for _ in 0..count {
            let thread = u32::try_from(reader.varint()?)
                .map_err(|_| TokenError::Malformed("a thread index is out of range"))?;
            let length = reader.varint()?;
            steps = steps.checked_add(length).ok_or(TokenError::Malformed(
                "it records more steps than can be counted",
            ))?;
            runs.push((thread, length));
        }
        let count = reader.count(1, "it claims more values than it has bytes for")?;
        let mut values = Vec::with_capacity(count);
        for _ in 0..count {
            values.push(reader.varint()?);
        }
        let settings = reader.byte()?;
        // Every bit of the byte is a setting.
        let races = if settings & 1 == 0 {
            RaceMode::Fail
        } else {
            RaceMode::Warn
        };
        let spurious_wakeups = settings & 2 != 0;
        let spurious_park_wakeups = settings & 16 != 0;
        let spurious_cas_failures = settings & 32 != 0;
        let panic_stops_execution = settings & 8 != 0;
        let spawned_panics_fail = settings & 128 != 0;
        let memory = if settings & 4 != 0 {
            MemoryModel::Weak
        } else {
            MemoryModel::SequentiallyConsistent
        };
        let yield_visibility = if settings & 64 != 0 {
            YieldVisibility::UnseenBeforeYield
        } else {
            YieldVisibility::LatestBeforeYield
        };
        let max_steps = reader.varint()?;
        let failure = match reader.byte()? {
            0 => None,
            code => Some(
                FailureKind::from_code(code)
                    .ok_or(TokenError::Malformed("unknown failure kind"))?,
            ),
        };
        let fingerprint = u64::from_le_bytes(reader.take(8)?.try_into().expect("8 bytes"));
        let count = reader.count(2, "it claims more block fingerprints than it has bytes for")?;
        let mut blocks = Vec::with_capacity(count);
        for _ in 0..count {
            blocks.push(u16::from_le_bytes(
                reader.take(2)?.try_into().expect("2 bytes"),
            ));
        }
        let test = reader.text()?;
        let message = reader.text()?;
        if !reader.bytes.is_empty() {
            return Err(TokenError::Malformed("it has trailing bytes"));
        }
        Ok(Token {
            runs,
            values,
            races,
            spurious_wakeups,
            spurious_park_wakeups,
            spurious_cas_failures,
            memory,
            yield_visibility,
            panic_stops_execution,
            spawned_panics_fail,
            max_steps,
            failure,
            fingerprint,
            blocks,
            test,
            message,
        })
    }
}

fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], TokenError> {
        if self.bytes.len() < n {
            return Err(TokenError::Malformed("it ends early"));
        }
        let (head, tail) = self.bytes.split_at(n);
        self.bytes = tail;
        Ok(head)
    }

    /// A count of items that take at least `min_bytes` each; more than the bytes left could
    /// hold is malformed, so the count can size an allocation.
    fn count(&mut self, min_bytes: usize, why: &'static str) -> Result<usize, TokenError> {
        let count = self.varint()?;
        match usize::try_from(count) {
            Ok(count) if count <= self.bytes.len() / min_bytes => Ok(count),
            _ => Err(TokenError::Malformed(why)),
        }
    }

    /// A length-prefixed UTF-8 text; empty is absent.
    fn text(&mut self) -> Result<Option<String>, TokenError> {
        let length = self.count(1, "it claims a text longer than it has bytes for")?;
        let bytes = self.take(length)?;
        let text =
            std::str::from_utf8(bytes).map_err(|_| TokenError::Malformed("a text is not UTF-8"))?;
        Ok((!text.is_empty()).then(|| text.to_string()))
    }

    fn byte(&mut self) -> Result<u8, TokenError> {
        Ok(self.take(1)?[0])
    }

    fn varint(&mut self) -> Result<u64, TokenError> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = self.byte()?;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(TokenError::Malformed("a number is too long"))
    }
}

fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// A hash of one step: its thread, operation, and its object's kind and index in the order the
/// execution created objects. Sites are left out on purpose, so that edits which move code
/// without changing what it does keep a token valid.
fn event_hash(ex: &Recording, event: &Event) -> u64 {
    let mut bytes = Vec::with_capacity(32);
    bytes.extend_from_slice(&event.thread.to_le_bytes());
    bytes.extend_from_slice(event.kind.name().as_bytes());
    if let Some(object) = ex.object(event.object) {
        bytes.extend_from_slice(object.kind.name().as_bytes());
        bytes.extend_from_slice(&event.object.to_le_bytes());
    }
    fnv1a(&bytes)
}

fn fold(ex: &Recording, events: &[Event]) -> u64 {
    events.iter().fold(events.len() as u64, |acc, e| {
        (acc ^ event_hash(ex, e)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The fingerprint of a whole execution.
pub(crate) fn fingerprint(ex: &Recording) -> u64 {
    fold(ex, &ex.events)
}

/// One 16-bit fingerprint per block of [`BLOCK`] steps.
pub(crate) fn block_fingerprints(ex: &Recording) -> Vec<u16> {
    ex.events
        .chunks(BLOCK)
        .map(|chunk| (fold(ex, chunk) >> 48) as u16)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(steps: usize) -> Token {
        Token {
            runs: runs((0..steps).map(|i| (i % 3) as u32 / 2 * 300)),
            values: vec![7, 1 << 40],
            races: RaceMode::Warn,
            spurious_wakeups: true,
            spurious_park_wakeups: true,
            spurious_cas_failures: true,
            memory: MemoryModel::Weak,
            yield_visibility: YieldVisibility::UnseenBeforeYield,
            panic_stops_execution: true,
            spawned_panics_fail: true,
            max_steps: 12_345,
            failure: Some(FailureKind::Deadlock),
            fingerprint: 0x1234_5678_9abc_def0,
            blocks: vec![1, 65535, 3],
            test: Some("bank::tests::transfer".to_string()),
            message: Some("assertion `left == right` failed: ünïcode".to_string()),
        }
    }

    #[test]
    fn round_trips() {
        for (steps, version) in [(2, "il2-"), (130, "il3-")] {
            let token = token(steps);
            let text = token.encode();
            assert!(text.starts_with(version), "{steps} steps: {text}");
            assert_eq!(Token::decode(&text), Ok(token));
        }
    }

    #[test]
    fn rejects_bad_tokens_with_reasons() {
        let good = token(2).encode();
        assert!(matches!(
            Token::decode("hello"),
            Err(TokenError::NotAToken(_))
        ));
        assert_eq!(
            Token::decode(&good.replacen("il2-", "il9-", 1)),
            Err(TokenError::UnsupportedVersion(9))
        );
        assert!(matches!(
            Token::decode("il2-@@@"),
            Err(TokenError::Encoding(_))
        ));
        let mut flipped = good.clone().into_bytes();
        let last = flipped.len() - 3;
        flipped[last] = if flipped[last] == b'A' { b'B' } else { b'A' };
        assert_eq!(
            Token::decode(std::str::from_utf8(&flipped).unwrap()),
            Err(TokenError::Checksum)
        );
        assert!(Token::decode(&good[..good.len() - 6]).is_err());
    }

    /// Only `il2-` names version 2: leading zeros, signs and other spellings that `u32`'s parser
    /// accepts are not a version.
    #[test]
    fn the_version_is_spelled_exactly() {
        let good = token(2).encode();
        let body = good.strip_prefix("il2-").unwrap();
        for prefix in [
            "il02-", "il0002-", "il+2-", "il-2-", "il 2-", "il2 -", "il-", "ilx-",
        ] {
            assert!(
                matches!(
                    Token::decode(&format!("{prefix}{body}")),
                    Err(TokenError::NotAToken(_))
                ),
                "{prefix} was accepted"
            );
        }
        assert_eq!(
            Token::decode(&format!("il4-{body}")),
            Err(TokenError::UnsupportedVersion(4))
        );
        assert!(
            matches!(
                Token::decode(&format!("il3-{body}")),
                Err(TokenError::Malformed(_))
            ),
            "a version 2 body is no deflated one"
        );
    }

    /// A spin's schedule, which alternates two threads for 100,000 steps, made a token longer
    /// than an environment variable may be; deflated, it is a few kilobytes, and it reads back
    /// the same. A short token keeps version 2, and a damaged deflated one is refused.
    #[test]
    fn a_long_repeating_schedule_is_deflated() {
        let mut spin = token(0);
        spin.runs = runs((0..100_000).map(|step| [0, 1, 1][step % 3]));
        // Block fingerprints are hashes, which deflate cannot shorten.
        spin.blocks = (0..100_000 / BLOCK as u32)
            .map(|block| (block.wrapping_mul(2_654_435_761) >> 16) as u16)
            .collect();
        let text = spin.encode();
        assert!(text.starts_with("il3-"), "{}", &text[..10]);
        assert!(text.len() < 8_000, "{} characters", text.len());
        assert_eq!(Token::decode(&text), Ok(spin));
        assert!(token(2).encode().starts_with("il2-"));
        for cut in [text.len() - 1, text.len() - 40, text.len() / 2] {
            assert!(Token::decode(&text[..cut]).is_err(), "cut at {cut}");
        }
    }

    /// A token with a valid checksum around `payload`, as a hostile or buggy producer could
    /// make it.
    fn forge(payload: &[u8]) -> String {
        let mut bytes = payload.to_vec();
        let checksum = fnv1a(&bytes) as u32;
        bytes.extend_from_slice(&checksum.to_le_bytes());
        format!("il2-{}", URL_SAFE_NO_PAD.encode(bytes))
    }

    /// The fields after the schedule and the values: race mode, step bound, failure,
    /// fingerprint, no blocks, no test, no message.
    fn tail() -> Vec<u8> {
        let mut out = vec![0];
        put_varint(&mut out, 1000);
        out.push(0);
        out.extend_from_slice(&[0; 8]);
        put_varint(&mut out, 0);
        put_varint(&mut out, 0);
        put_varint(&mut out, 0);
        out
    }

    #[test]
    fn a_label_keeps_the_first_line_of_the_message_cut_at_a_character() {
        let long = format!("{}é and more\nsecond line", "x".repeat(MESSAGE_BYTES - 1));
        let token = token(1).labelled(Some("t"), &long);
        assert_eq!(
            token.message.as_deref(),
            Some("x".repeat(MESSAGE_BYTES - 1).as_str())
        );
        let token = token.labelled(None, "  \n");
        assert_eq!((token.test, token.message), (None, None));
        let mut text = vec![0, 0];
        text.extend(tail());
        let length = text.len() - 2;
        text[length] = 9;
        match Token::decode(&forge(&text)) {
            Err(TokenError::Malformed(why)) => assert!(why.contains("a text longer"), "{why}"),
            other => panic!("{other:?}"),
        }
    }

    /// Every count read from a token is checked against the bytes that follow it, so no
    /// number in a token sizes an allocation; run lengths are kept as runs, so a schedule of
    /// 2^40 steps costs a few bytes.
    #[test]
    fn counts_are_bounded_by_the_bytes_present() {
        let mut huge_runs = Vec::new();
        put_varint(&mut huge_runs, 1 << 62);
        let mut huge_values = vec![0];
        put_varint(&mut huge_values, 1 << 62);
        let mut huge_blocks = vec![0, 0, 0];
        put_varint(&mut huge_blocks, 1000);
        huge_blocks.extend_from_slice(&[0; 9]);
        put_varint(&mut huge_blocks, 1 << 62);
        let mut overflowing = Vec::new();
        put_varint(&mut overflowing, 2);
        for _ in 0..2 {
            put_varint(&mut overflowing, 0);
            put_varint(&mut overflowing, u64::MAX - 1);
        }
        overflowing.push(0);
        overflowing.extend(tail());
        for (payload, expected) in [
            (huge_runs, "more runs than it has bytes"),
            (huge_values, "more values than it has bytes"),
            (huge_blocks, "more block fingerprints than it has bytes"),
            (overflowing, "more steps than can be counted"),
        ] {
            match Token::decode(&forge(&payload)) {
                Err(TokenError::Malformed(why)) => assert!(why.contains(expected), "{why}"),
                other => panic!("{expected}: {other:?}"),
            }
        }

        let mut long = Vec::new();
        put_varint(&mut long, 2);
        put_varint(&mut long, 0);
        put_varint(&mut long, 1 << 40);
        put_varint(&mut long, 1);
        put_varint(&mut long, 3);
        long.push(0);
        long.extend(tail());
        let token = Token::decode(&forge(&long)).unwrap();
        assert_eq!(token.steps(), (1 << 40) + 3);
        assert_eq!(token.runs, [(0, 1 << 40), (1, 3)]);
    }
}
