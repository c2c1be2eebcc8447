//! Runs peer jobs in a child process, so that neither peer can disturb the caller.
//!
//! Both peers report a failure by panicking, and neither is built to be embedded: shuttle prints
//! every failure to stderr, and loom aborts the whole process when a thread still holding a lock
//! is torn down after a deadlock ("panic in a destructor during cleanup"). So `interleave bench`
//! runs peer jobs in a worker process ([`serve`], behind a hidden subcommand) and talks to it
//! with [`Client`]: one job per line on the worker's stdin, one result per line on its stdout,
//! stderr discarded.
//!
//! The worker's panic hook writes the result of a failing job the moment the first panic
//! happens, before any unwinding, so the result survives an abort that follows. After any
//! failing job the client replaces the worker with a fresh process, since the failed one may be
//! about to abort or hold a half-torn-down peer runtime.

use std::ffi::OsString;
use std::io::{self, BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};

use interleave_programs::Variant;

use crate::suite_runs::{self, PeerFailure, PeerFailureKind, PeerRun, PeerSpec};

/// One peer run to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Job {
    /// The peer and its parameters.
    pub peer: PeerSpec,
    /// The benchmark program's name.
    pub program: String,
    /// Which version of it.
    pub variant: Variant,
    /// The peer's random seed (ignored by loom).
    pub seed: u64,
    /// At most this many executions.
    pub executions: u64,
}

impl Job {
    fn to_line(&self) -> String {
        format!(
            "{} {} {} {} {}",
            self.peer, self.program, self.variant, self.seed, self.executions
        )
    }

    fn parse(line: &str) -> Result<Job, String> {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [peer, program, variant, seed, executions] = fields[..] else {
            return Err(format!("expected 5 fields, got {line:?}"));
        };
        Ok(Job {
            peer: peer.parse().map_err(|e| format!("{e}"))?,
            program: program.to_string(),
            variant: match variant {
                "buggy" => Variant::Buggy,
                "fixed" => Variant::Fixed,
                other => return Err(format!("unknown variant {other:?}")),
            },
            seed: seed.parse().map_err(|e| format!("seed {seed:?}: {e}"))?,
            executions: executions
                .parse()
                .map_err(|e| format!("executions {executions:?}: {e}"))?,
        })
    }
}

/// A result as one line: `ok N EXHAUSTED`, `fail N INDEX KIND MESSAGE` or
/// `unsupported N REASON`, where N is the number of executions run.
fn encode(run: &PeerRun) -> String {
    let one_line = |s: &str| s.replace(['\n', '\r'], " ");
    match (&run.failure, &run.unsupported) {
        (_, Some(reason)) => format!("unsupported {} {}", run.executions, one_line(reason)),
        (Some(f), None) => format!(
            "fail {} {} {} {}",
            run.executions,
            f.execution,
            f.kind.name(),
            one_line(&f.message)
        ),
        (None, None) => format!("ok {} {}", run.executions, u8::from(run.exhausted)),
    }
}

fn decode(line: &str) -> Result<PeerRun, String> {
    let bad = || format!("malformed peer result {line:?}");
    let mut fields = line.trim_end().splitn(2, ' ');
    let tag = fields.next().ok_or_else(bad)?;
    let rest = fields.next().ok_or_else(bad)?;
    let (executions, rest) = rest.split_once(' ').unwrap_or((rest, ""));
    let executions: u64 = executions.parse().map_err(|_| bad())?;
    match tag {
        "ok" => Ok(PeerRun {
            executions,
            exhausted: rest == "1",
            ..PeerRun::default()
        }),
        "unsupported" => Ok(PeerRun {
            executions,
            unsupported: Some(rest.to_string()),
            ..PeerRun::default()
        }),
        "fail" => {
            let mut parts = rest.splitn(3, ' ');
            let execution = parts.next().and_then(|s| s.parse().ok()).ok_or_else(bad)?;
            let name = parts.next().ok_or_else(bad)?;
            let kind = [
                PeerFailureKind::Panic,
                PeerFailureKind::Deadlock,
                PeerFailureKind::DataRace,
            ]
            .into_iter()
            .find(|kind| kind.name() == name)
            .ok_or_else(bad)?;
            Ok(PeerRun {
                executions,
                failure: Some(PeerFailure {
                    execution,
                    kind,
                    message: parts.next().unwrap_or("").to_string(),
                }),
                ..PeerRun::default()
            })
        }
        _ => Err(bad()),
    }
}

/// Set while a job runs, so the panic hook only reports panics of peer runs.
static RUNNING: AtomicBool = AtomicBool::new(false);
/// Set once the current job's result has been written.
static REPORTED: AtomicBool = AtomicBool::new(false);

fn write_line(line: &str) {
    let mut out = io::stdout().lock();
    // A closed stdout means the client is gone; there is nobody left to tell.
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// The worker's main loop: reads jobs from stdin until it closes, writes one result line per
/// job to stdout. Call it from a binary's hidden subcommand (see [`Client::new`]).
pub fn serve() -> io::Result<()> {
    std::panic::set_hook(Box::new(|info| {
        if RUNNING.load(Ordering::SeqCst) && !REPORTED.swap(true, Ordering::SeqCst) {
            let message = info
                .payload_as_str()
                .map_or_else(|| info.to_string(), str::to_string);
            write_line(&encode(&suite_runs::failed(&message)));
        }
    }));
    let stdin = io::stdin();
    for line in stdin.lock().lines() {
        let line = line?;
        let job = match Job::parse(&line) {
            Ok(job) => job,
            Err(e) => {
                write_line(&format!("unsupported 0 bad job: {e}"));
                continue;
            }
        };
        REPORTED.store(false, Ordering::SeqCst);
        RUNNING.store(true, Ordering::SeqCst);
        let run = suite_runs::run(
            job.peer,
            &job.program,
            job.variant,
            job.seed,
            job.executions,
        );
        RUNNING.store(false, Ordering::SeqCst);
        if !REPORTED.swap(true, Ordering::SeqCst) {
            write_line(&encode(&run));
        }
    }
    Ok(())
}

/// A running worker process.
struct Worker {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

/// Sends jobs to a worker process, starting a fresh one whenever the last one failed a job.
pub struct Client {
    program: PathBuf,
    args: Vec<OsString>,
    worker: Option<Worker>,
}

impl Client {
    /// A client whose workers are started as `program args...`, a command that calls
    /// [`serve`].
    pub fn new(program: PathBuf, args: Vec<OsString>) -> Client {
        Client {
            program,
            args,
            worker: None,
        }
    }

    fn worker(&mut self) -> io::Result<&mut Worker> {
        if self.worker.is_none() {
            let mut child = Command::new(&self.program)
                .args(&self.args)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()?;
            let stdin = child.stdin.take().expect("stdin is piped");
            let stdout = BufReader::new(child.stdout.take().expect("stdout is piped"));
            self.worker = Some(Worker {
                child,
                stdin,
                stdout,
            });
        }
        Ok(self.worker.as_mut().expect("just started"))
    }

    fn retire(&mut self) {
        if let Some(mut worker) = self.worker.take() {
            let _ = worker.child.kill();
            let _ = worker.child.wait();
        }
    }

    /// Runs `job` in the worker process.
    ///
    /// # Errors
    ///
    /// The worker could not be started, or it died without reporting a result.
    pub fn run(&mut self, job: &Job) -> io::Result<PeerRun> {
        let result = self.exchange(job);
        if !matches!(&result, Ok(run) if run.failure.is_none() && run.unsupported.is_none()) {
            self.retire();
        }
        result
    }

    fn exchange(&mut self, job: &Job) -> io::Result<PeerRun> {
        let worker = self.worker()?;
        writeln!(worker.stdin, "{}", job.to_line())?;
        worker.stdin.flush()?;
        let mut line = String::new();
        if worker.stdout.read_line(&mut line)? == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "the peer worker exited without a result for {} on {}",
                    job.program, job.peer
                ),
            ));
        }
        decode(&line).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        self.retire();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_and_jobs_round_trip() {
        let job = Job {
            peer: PeerSpec::ShuttlePct { depth: 3 },
            program: "rpro-d1".to_string(),
            variant: Variant::Fixed,
            seed: 7,
            executions: 100,
        };
        assert_eq!(Job::parse(&job.to_line()).unwrap(), job);
        assert!(Job::parse("loom:b=2 rpro-d1 sideways 1 1").is_err());
        for line in [
            "ok 100 0",
            "ok 37 1",
            "unsupported 0 more threads than loom models",
            "fail 12 11 deadlock deadlock; threads = [..]",
        ] {
            assert_eq!(encode(&decode(line).unwrap()), line);
        }
        assert!(decode("fail 12 x panic boom").is_err());
        assert!(decode("maybe 1 2").is_err());
    }
}
