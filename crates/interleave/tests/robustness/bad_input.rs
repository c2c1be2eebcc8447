//! Hostile replay tokens: tokens with a valid checksum whose numbers are absurd. Decoding must
//! give a typed error or a replay whose cost is that of the program, never an allocation sized
//! by a number read from the token. The allocation probe runs in a child process, because the
//! failure it guards against could take the whole suite's memory.

use interleave::{Builder, Error, FailureKind, TokenError};

use crate::probe::Probe;

fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// The token format's checksum (64-bit FNV-1a, its low 32 bits stored).
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// URL-safe base64 without padding, as tokens are written.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

/// A token around `payload` with a valid checksum.
fn forge(prefix: &str, payload: &[u8]) -> String {
    let mut bytes = payload.to_vec();
    let checksum = fnv1a(&bytes) as u32;
    bytes.extend_from_slice(&checksum.to_le_bytes());
    format!("{prefix}{}", base64(&bytes))
}

/// The payload of a schedule of the given runs (thread, length), without values, and the
/// fields that follow: races fail, a step bound of 1000, no failure, fingerprint 0, no blocks,
/// no test, no message.
fn schedule(runs: &[(u64, u64)]) -> Vec<u8> {
    let mut out = Vec::new();
    put_varint(&mut out, runs.len() as u64);
    for &(thread, length) in runs {
        put_varint(&mut out, thread);
        put_varint(&mut out, length);
    }
    put_varint(&mut out, 0);
    out.push(0);
    put_varint(&mut out, 1000);
    out.push(0);
    out.extend_from_slice(&[0; 8]);
    put_varint(&mut out, 0);
    put_varint(&mut out, 0);
    put_varint(&mut out, 0);
    out
}

fn replay(token: &str) -> Result<interleave::Report, Error> {
    Builder::new().ignore_environment().replay(token, || {})
}

/// The peak resident memory of this process, in bytes (Linux only).
fn peak_memory() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// A token of a few bytes once made the replay expand its run lengths into one `u32` per step
/// (and copy them): 2^28 steps claimed cost 2 GiB. Runs are now replayed as runs.
#[test]
fn a_token_cannot_size_an_allocation() {
    let probe = Probe::new(module_path!(), "a_token_cannot_size_an_allocation");
    if let Some(outcome) = probe.run(|| {
        let before = peak_memory();
        let token = forge("il2-", &schedule(&[(0, (1 << 28) - 1)]));
        let report = replay(&token).expect("a well-formed token");
        let failure = report
            .first_failure()
            .expect("the program is not that long");
        assert_eq!(failure.kind, FailureKind::Divergence, "{failure}");
        if let (Some(before), Some(after)) = (before, peak_memory()) {
            let grown = after.saturating_sub(before);
            assert!(
                grown < 64 << 20,
                "the replay's peak memory grew by {} MiB",
                grown >> 20
            );
        }
        // A schedule longer than any memory is fine too: it is never expanded.
        let endless = forge("il2-", &schedule(&[(1, 1 << 40), (0, 1 << 40)]));
        let report = replay(&endless).expect("a well-formed token");
        let failure = report.first_failure().expect("thread 1 does not exist");
        assert!(
            failure.message.contains("thread 1 does not exist"),
            "{failure}"
        );
    }) {
        assert_eq!(outcome.code, Some(0), "{outcome:?}");
    }
}

/// Hand-built hostile tokens give a typed error with a one-line reason.
#[test]
fn hostile_tokens_are_typed_errors() {
    let valid = schedule(&[(0, 1)]);
    let mut huge_runs = Vec::new();
    put_varint(&mut huge_runs, u64::MAX);
    let mut huge_values = vec![0];
    put_varint(&mut huge_values, 1 << 50);
    let mut huge_thread = Vec::new();
    put_varint(&mut huge_thread, 1);
    put_varint(&mut huge_thread, 1 << 40);
    put_varint(&mut huge_thread, 1);
    let mut long_varint = vec![1];
    long_varint.extend_from_slice(&[0xff; 11]);
    let mut trailing = valid.clone();
    trailing.push(0);
    let cases: Vec<(String, &str)> = vec![
        (forge("il2-", &huge_runs), "runs"),
        (forge("il2-", &huge_values), "values"),
        (forge("il2-", &huge_thread), "thread index"),
        (
            forge("il2-", &schedule(&[(0, u64::MAX), (0, u64::MAX)])),
            "more steps than can be counted",
        ),
        (forge("il2-", &long_varint), "too long"),
        (forge("il2-", &trailing), "trailing"),
        (forge("il2-", &[]), "ends early"),
        (forge("il02-", &valid), "should start with"),
        (forge("il0002-", &valid), "should start with"),
        (forge("il+2-", &valid), "should start with"),
        (forge("il2-", &valid).replace("il2-", "il2--"), "corrupted"),
    ];
    for (token, expected) in cases {
        let error = replay(&token).expect_err(&token);
        assert!(matches!(error, Error::Token(_)), "{token}: {error:?}");
        let message = error.to_string();
        assert!(message.contains(expected), "{token}: {message}");
        assert_eq!(message.lines().count(), 1, "{message}");
    }
    assert!(replay(&forge("il2-", &valid)).is_ok());
    assert!(matches!(
        replay(&forge("il1-", &valid)),
        Err(Error::Token(TokenError::UnsupportedVersion(1)))
    ));
}
