//! Runs a probe in a child process: this test binary again, filtered to the one test, with
//! `INTERLEAVE_PROBE` naming the probe. A crash (SIGSEGV, abort) or a hang in the probe becomes
//! an outcome the parent asserts on instead of the end of the whole suite.
//!
//! ```ignore
//! #[test]
//! fn a_panicking_drop_is_reported() {
//!     if let Some(outcome) = Probe::new(module_path!(), "a_panicking_drop_is_reported").run(|| {
//!         // code that used to crash the process
//!     }) {
//!         assert!(outcome.survived(), "{outcome:?}");
//!     }
//! }
//! ```

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What a probe's child process did.
#[derive(Debug)]
pub struct Outcome {
    /// The exit code, `None` when a signal ended the child or it was killed after the timeout.
    pub code: Option<i32>,
    /// The child was still running at the timeout and was killed.
    pub timed_out: bool,
    pub stdout: String,
    pub stderr: String,
}

impl Outcome {
    /// Both streams, for assertions on what the user sees.
    pub fn output(&self) -> String {
        format!("{}{}", self.stdout, self.stderr)
    }

    /// The child ended by itself, without a signal (a failing test exits with 101).
    pub fn survived(&self) -> bool {
        !self.timed_out && self.code.is_some()
    }
}

const PROBE_VARIABLE: &str = "INTERLEAVE_PROBE";

/// One probe: a test of this binary and a label that tells its probes apart.
pub struct Probe {
    test: String,
    label: String,
    timeout: Duration,
    env: Vec<(String, String)>,
    captured: bool,
}

impl Probe {
    /// The probe of test `name` in module `module` (pass `module_path!()`).
    pub fn new(module: &str, name: &str) -> Probe {
        // libtest names a test by its path without the crate's name.
        let test = match module.split_once("::") {
            Some((_, rest)) => format!("{rest}::{name}"),
            None => name.to_string(),
        };
        Probe {
            test,
            label: String::new(),
            timeout: Duration::from_secs(60),
            env: Vec::new(),
            captured: false,
        }
    }

    /// Tells apart several probes of one test.
    pub fn label(mut self, label: &str) -> Probe {
        self.label = label.to_string();
        self
    }

    /// How long the child may run before it counts as hung (default 60 s).
    pub fn timeout(mut self, timeout: Duration) -> Probe {
        self.timeout = timeout;
        self
    }

    /// Runs the child's test with libtest's output capture on (without `--nocapture`), so only
    /// what bypasses the capture, or what a failing test shows, is seen.
    pub fn captured(mut self) -> Probe {
        self.captured = true;
        self
    }

    /// An environment variable for the child.
    pub fn env(mut self, key: &str, value: &str) -> Probe {
        self.env.push((key.to_string(), value.to_string()));
        self
    }

    /// In the parent: runs `body` in a child process and returns what the child did. In the
    /// child: runs `body` and returns `None`, so the child's test passes or fails by `body`.
    pub fn run(self, body: impl FnOnce()) -> Option<Outcome> {
        let identity = format!("{}#{}", self.test, self.label);
        match std::env::var(PROBE_VARIABLE) {
            Ok(probe) if probe == identity => {
                body();
                return None;
            }
            // The child of another probe of this test: this one is not its business.
            Ok(probe) if probe.starts_with(&format!("{}#", self.test)) => return None,
            _ => {}
        }
        let capture = if self.captured {
            None
        } else {
            Some("--nocapture")
        };
        let mut child = Command::new(std::env::current_exe().expect("the test binary's path"))
            .args([self.test.as_str(), "--exact", "--test-threads=1"])
            .args(capture)
            .env(PROBE_VARIABLE, &identity)
            .env_remove("INTERLEAVE_REPLAY")
            .envs(self.env)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the probe's child process starts");
        let readers = [
            read_all(child.stdout.take().expect("piped stdout")),
            read_all(child.stderr.take().expect("piped stderr")),
        ];
        let started = Instant::now();
        let (code, timed_out) = loop {
            if let Some(status) = child.try_wait().expect("waiting for the probe") {
                break (status.code(), false);
            }
            if started.elapsed() > self.timeout {
                let _ = child.kill();
                let _ = child.wait();
                break (None, true);
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let [stdout, stderr] = readers.map(|reader| reader.join().unwrap_or_default());
        Some(Outcome {
            code,
            timed_out,
            stdout,
            stderr,
        })
    }
}

fn read_all(mut stream: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stream.read_to_string(&mut text);
        text
    })
}
