//! Seed 000 (Bindal, Bansal, Lal: *Variable and Thread Bounding for Systematic Testing of
//! Multithreaded Programs*), Table 1: the ConTest benchmark programs.
//!
//! Table 1 of the paper lists the programs of the ConTest concurrency benchmark suite (small Java
//! programs written to contain one concurrency bug each) with the (c, v, t) measure of the bug
//! the paper's tool found: c preemptions, at accesses of v distinct shared variables, with t
//! threads whose relative order matters. The paper gives only names, sizes, one-line
//! descriptions and the measures (plus the pseudo-code of the AllocationVector bug, Fig 12), so
//! every program here is a rebuild from the classic ConTest programs' known structure, shrunk to
//! a few threads and a few dozen scheduling points:
//!
//! | program | paper (c, v, t) | here | bug kind |
//! |---|---|---|---|
//! | Account | (1, 1, 2) | (1, 1, 2) | lost deposit (assertion) |
//! | AirlineTickets | (0, 0, 2) | (0, 0, 2) | overselling (assertion) |
//! | AllocationVector | (2, 1, 2) | (1, 1, 2), and (2, 1, 2) in the `-c2` twin | double allocation (assertion) |
//! | BubbleSort | (0, 0, 2) | (0, 0, 2) | unsorted result (assertion) |
//! | BufWriter | (0, 0, 2) | (0, 0, 2) | premature check (assertion) |
//! | LinkedList | (1, 1, 2) | (1, 1, 2) | lost node (assertion) |
//! | Manager | (1, 1, 2) | (1, 1, 2) | lost block-count update (assertion) |
//! | MergeSort | (1, 1, 2) | (1, 1, 2) | thread limit exceeded (assertion) |
//! | Piper | (1, 1, 2) | (0, 0, 3), see [`piper`] | lost passengers, consumers wait forever (deadlock) |
//! | PingPong | (1, 1, 2) | (1, 1, 2) | null player (panic) |
//! | ProducerConsumer | (0, 0, 2) | (0, 0, 3), see [`producer_consumer`] | items never consumed (assertion) |
//!
//! How they were rebuilt: a Java field accessed without a common lock is a [`Var`] (every access
//! a scheduling point, unsynchronised conflicting accesses are data races: the buggy versions
//! race by design, and their bug kind is the consequence, not the race); a `synchronized`
//! method is a critical section of a `Mutex` standing for the object's monitor (with the fields
//! it guards inside it when nothing accesses them unguarded); `wait`/`notifyAll` is a
//! `Condvar`. The test harness of each program (the Java `main`) is the test body: it spawns the
//! threads, joins them all, and checks the program's invariant with an `assert!` naming it.
//!
//! Rare, not everywhere: where the original leaves timing to real time (file output, busy
//! waits, thread start latency), the thread whose conflicting step must come *late* does a few
//! steps of `unrelated_work` (increments of a counter of the thread's own), so that a
//! random walk exposes each bug in a small fraction of its executions while PCT needs the same
//! change points as without the work. Each function's doc comment records that choice and
//! every other one.

use super::rt;
use super::rt::cell::Var;
use super::rt::sync::{Arc, Condvar, Mutex};
use super::rt::thread;
use super::util::unrelated_work;
use super::{BugKind, Finding, Program, Variant};

/// Spawns one thread per closure, in order, then joins them all (propagating panics) and
/// returns their results in the same order.
fn run_threads<T: Send + 'static>(threads: Vec<Box<dyn FnOnce() -> T + Send>>) -> Vec<T> {
    let mut handles = Vec::with_capacity(threads.len());
    for t in threads {
        handles.push(thread::spawn(t));
    }
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}

/// `x += d` on a plain field: a read, then a write (two scheduling points). Returns the new
/// value.
fn add(x: &Var<i64>, d: i64) -> i64 {
    let v = x.get();
    x.set(v + d);
    v + d
}

// ---------------------------------------------------------------------------------------------
// Account
// ---------------------------------------------------------------------------------------------

/// Opening balance of each account.
const ACCOUNT_OPENING: i64 = 100;

/// Steps of unrelated work the second account holder does before its first operation.
pub const ACCOUNT_PREP: u32 = 16;

/// ConTest's `Account`: a balance and the monitor its `synchronized` methods hold.
struct BankAccount {
    monitor: Mutex<()>,
    amount: Var<i64>,
}

impl BankAccount {
    fn new(amount: i64) -> Self {
        BankAccount {
            monitor: Mutex::new(()),
            amount: Var::new(amount),
        }
    }

    /// `synchronized void deposit(money)`.
    fn deposit(&self, money: i64) {
        let _monitor = self.monitor.lock().unwrap();
        add(&self.amount, money);
    }

    /// `synchronized void withdraw(money)`, which checks that it did not overdraw the account.
    /// It never does, under any schedule (at least 80 remain, even after a lost update), so the
    /// check is an ordinary branch on a balance whose value does depend on the schedule.
    fn withdraw(&self, money: i64) {
        let _monitor = self.monitor.lock().unwrap();
        let left = add(&self.amount, -money);
        assert!(
            rt::branch(left >= 0),
            "account: withdrawing {money} overdrew the account to {left}"
        );
    }

    /// `synchronized void transfer(to, money)`: holds this account's monitor only. The buggy
    /// version credits `to` inside it, without `to`'s monitor; the fixed one leaves its own
    /// critical section and deposits into `to` through `to`'s synchronized method.
    fn transfer(&self, to: &BankAccount, money: i64, variant: Variant) {
        {
            let _monitor = self.monitor.lock().unwrap();
            add(&self.amount, -money);
            if variant == Variant::Buggy {
                add(&to.amount, money);
                return;
            }
        }
        to.deposit(money);
    }

    fn balance(&self) -> i64 {
        let _monitor = self.monitor.lock().unwrap();
        self.amount.get()
    }
}

/// One account holder's script: deposit 50, transfer 10 to the other account, withdraw 20.
fn account_script(own: &BankAccount, other: &BankAccount, variant: Variant) {
    own.deposit(50);
    own.transfer(other, 10, variant);
    own.withdraw(20);
}

/// ConTest Account (Table 1: (1, 1, 2)): two threads operate on two accounts; `transfer` holds
/// only the source account's monitor while it credits the destination, so a credit can
/// overwrite a concurrent update of the destination's balance.
///
/// Original: accounts with a `synchronized` `deposit`, `withdraw` and `transfer(ac, money)`;
/// `transfer` does `amount -= money; ac.amount += money`, the second statement without `ac`'s
/// lock. One `ManageAccount` thread per account runs a fixed script of deposits, withdrawals
/// and transfers to the other accounts; `main` joins them and checks every final balance.
///
/// Rebuilt with two accounts A and B (opening balance 100) and one thread per account, whose
/// script is `deposit(50); transfer(other, 10); withdraw(20)`, so both must end at 130. `+=`
/// is a read and a write of the balance. Choice left open: the original's scripts are longer
/// and run five accounts; two accounts and three operations keep the bug and the run short.
/// B's holder first does [`ACCOUNT_PREP`] steps of unrelated work, so a random walk usually
/// lets A's transfer complete before B's operations start.
///
/// The bug: A's `transfer` reads B's balance, is preempted, B's holder runs its deposit (under
/// B's monitor, which A never takes), and A writes back the stale balance plus 10: B's deposit
/// is lost. One preemption, at an access of one variable (B's balance), two threads: (1, 1, 2),
/// as in the paper. PCT depth 2: A above B, one change point between A's read and write of B's
/// balance. The symmetric race (B's transfer into A) needs A to be the late thread. Fixed twin:
/// `transfer` credits the destination through its `synchronized` `deposit`, after releasing its
/// own monitor (taking both monitors nested, as ConTest's "protected" branch does, could
/// deadlock with the opposite transfer).
pub fn account(variant: Variant) {
    let a = Arc::new(BankAccount::new(ACCOUNT_OPENING));
    let b = Arc::new(BankAccount::new(ACCOUNT_OPENING));
    let (a1, b1) = (a.clone(), b.clone());
    let (a2, b2) = (a.clone(), b.clone());
    run_threads::<()>(vec![
        Box::new(move || account_script(&a1, &b1, variant)),
        Box::new(move || {
            unrelated_work(ACCOUNT_PREP);
            account_script(&b2, &a2, variant);
        }),
    ]);
    let expected = ACCOUNT_OPENING + 50 - 10 - 20 + 10;
    for (name, acc) in [("A", &a), ("B", &b)] {
        let got = acc.balance();
        assert!(
            rt::branch(got == expected),
            "account: the balance of {name} must be its opening amount plus deposits and transfers in minus withdrawals and transfers out (an update was lost): {got}, expected {expected}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// AirlineTickets
// ---------------------------------------------------------------------------------------------

/// Tickets issued: the seller threads `main` may start.
const AIRLINE_TICKETS: u32 = 4;

/// Seats on the plane.
const AIRLINE_CAPACITY: u32 = 2;

/// Steps of unrelated work `main` does after starting each seller (issuing the ticket).
pub const AIRLINE_ISSUE_STEPS: u32 = 10;

/// ConTest's airline `Bug` object: the seats sold and the stop flag, plain fields.
struct Airline {
    sold: Var<u32>,
    stop_sales: Var<bool>,
    /// Guards both fields in the fixed twin.
    office: Mutex<()>,
}

impl Airline {
    /// A seller thread's `run`: sell one seat; stop the sales when the plane is overbooked.
    fn sell(&self, variant: Variant) {
        match variant {
            Variant::Buggy => {
                let s = self.sold.get();
                self.sold.set(s + 1);
                if rt::branch(self.sold.get() > AIRLINE_CAPACITY) {
                    self.stop_sales.set(true);
                }
            }
            Variant::Fixed => {
                let _office = self.office.lock().unwrap();
                let s = self.sold.get();
                if rt::branch(s < AIRLINE_CAPACITY) {
                    self.sold.set(s + 1);
                }
                if rt::branch(s + 1 >= AIRLINE_CAPACITY) {
                    self.stop_sales.set(true);
                }
            }
        }
    }

    /// `main`'s check before starting the next seller: are sales stopped? The buggy version
    /// also cancels the one ticket it assumes was oversold.
    fn sales_stopped(&self, variant: Variant) -> bool {
        match variant {
            Variant::Buggy => {
                if self.stop_sales.get() {
                    let s = self.sold.get();
                    self.sold.set(s - 1);
                    return true;
                }
                false
            }
            Variant::Fixed => {
                let _office = self.office.lock().unwrap();
                self.stop_sales.get()
            }
        }
    }
}

/// ConTest AirlineTickets (Table 1: (0, 0, 2)): `main` starts one seller thread per issued
/// ticket until a seller reports the plane overbooked, but nothing makes that report arrive
/// before `main` starts the next seller, so more seats are sold than exist.
///
/// Original: `main` loops over the issued tickets; before starting each seller it checks
/// `StopSales`, and if set cancels one sale (`Num_Of_Seats_Sold--`) and stops. Each seller runs
/// `Num_Of_Seats_Sold++; if (Num_Of_Seats_Sold > Maximum_Capacity) StopSales = true;`, all
/// unsynchronised. The final check fails if more seats are sold than the capacity.
///
/// Rebuilt with 4 tickets and 2 seats (the original issues more tickets; 4 sellers keep the
/// thread count at loom's limit), a join of every started seller before the final check (the
/// original checks without joining), and `++` as a read and a write. Choice left open: after
/// starting a seller, `main` does [`AIRLINE_ISSUE_STEPS`] steps of unrelated work (issuing the
/// ticket), so a random walk usually lets the third seller set `StopSales` before `main`'s
/// next check.
///
/// The bug: `main` checks `StopSales` before the third seller (the first to overbook) has set
/// it, starts the fourth seller, and both extra sales stand (only one is ever cancelled). No
/// preemption is needed: the schedule that runs `main` until it blocks in `join` and then the
/// sellers exposes it; what matters is the order of `main` and the third seller: (0, 0, 2), as
/// in the paper. The racy `++` can also lose a sale, which hides the overbooking from the
/// third seller and so has the same effect. PCT finds it whenever `main` outranks the third
/// seller (depth 1 suffices). Fixed twin: a seller checks for a free seat and sells it in one
/// critical section of the booking office, so no seat is sold beyond the capacity whatever the
/// order; `main` only reads the stop flag under the same lock.
pub fn airline_tickets(variant: Variant) {
    let airline = Arc::new(Airline {
        sold: Var::new(0),
        stop_sales: Var::new(false),
        office: Mutex::new(()),
    });
    let mut sellers = Vec::new();
    for _ in 0..AIRLINE_TICKETS {
        // `if (StopSales)` before starting the next seller.
        if rt::branch(airline.sales_stopped(variant)) {
            break;
        }
        let a = airline.clone();
        sellers.push(thread::spawn(move || a.sell(variant)));
        unrelated_work(AIRLINE_ISSUE_STEPS);
    }
    for s in sellers {
        s.join().unwrap();
    }
    let sold = {
        let _office = airline.office.lock().unwrap();
        airline.sold.get()
    };
    assert!(
        rt::branch(sold <= AIRLINE_CAPACITY),
        "airlinetickets: no more seats may be sold than the plane has (sold {sold}, capacity {AIRLINE_CAPACITY})"
    );
}

// ---------------------------------------------------------------------------------------------
// AllocationVector
// ---------------------------------------------------------------------------------------------

/// Blocks in the vector.
const ALLOCATION_BLOCKS: usize = 4;

/// Blocks each of the two test threads allocates.
const ALLOCATIONS_PER_THREAD: usize = 2;

/// Steps of unrelated work the second test thread does before its first allocation.
pub const ALLOCATION_PREP: u32 = 12;

/// ConTest's `AllocationVector`: one flag per block (`true`: allocated), every method
/// `synchronized`.
struct AllocationVector {
    blocks: Mutex<[bool; ALLOCATION_BLOCKS]>,
}

impl AllocationVector {
    /// `synchronized int getFreeBlockIndex()`: a free block, if any (the lowest one here).
    fn get_free_block_index(&self) -> Option<usize> {
        self.blocks
            .lock()
            .unwrap()
            .iter()
            .position(|&allocated| !allocated)
    }

    /// `synchronized void markAsAllocatedBlock(i)`: fails if block `i` is already allocated.
    fn mark_as_allocated_block(&self, i: usize) {
        let mut blocks = self.blocks.lock().unwrap();
        assert!(
            !blocks[i],
            "allocationvector: block {i} must be free when it is marked allocated (two threads were handed the same free block)"
        );
        blocks[i] = true;
    }

    /// `synchronized void markAsFreeBlock(i)`: fails if block `i` is already free.
    fn mark_as_free_block(&self, i: usize) {
        let mut blocks = self.blocks.lock().unwrap();
        assert!(
            blocks[i],
            "allocationvector: block {i} must be allocated when it is freed"
        );
        blocks[i] = false;
    }

    /// Allocates a block: the buggy version finds a free block and marks it in two critical
    /// sections, with a gap between them, the fixed one in one.
    fn allocate(&self, variant: Variant) -> Option<usize> {
        match variant {
            Variant::Buggy => {
                let i = self.get_free_block_index()?;
                self.mark_as_allocated_block(i);
                Some(i)
            }
            Variant::Fixed => {
                let mut blocks = self.blocks.lock().unwrap();
                let i = blocks.iter().position(|&allocated| !allocated)?;
                blocks[i] = true;
                Some(i)
            }
        }
    }
}

/// The AllocationVector test: two threads each allocate [`ALLOCATIONS_PER_THREAD`] blocks;
/// with `free_in_thread` each frees its own blocks before finishing (ConTest's `TestThread`),
/// otherwise the test body frees them all after joining.
fn allocation_vector_test(variant: Variant, free_in_thread: bool) {
    let vector = Arc::new(AllocationVector {
        blocks: Mutex::new([false; ALLOCATION_BLOCKS]),
    });
    let worker = move |vector: Arc<AllocationVector>, prep: u32| -> Vec<usize> {
        unrelated_work(prep);
        let mut result = Vec::with_capacity(ALLOCATIONS_PER_THREAD);
        for _ in 0..ALLOCATIONS_PER_THREAD {
            result.extend(vector.allocate(variant));
        }
        if free_in_thread {
            for &i in &result {
                vector.mark_as_free_block(i);
            }
        }
        result
    };
    let (v1, v2) = (vector.clone(), vector.clone());
    let results = run_threads(vec![
        Box::new(move || worker(v1, 0)),
        Box::new(move || worker(v2, ALLOCATION_PREP)),
    ]);
    if !free_in_thread {
        for &i in results.iter().flatten() {
            vector.mark_as_free_block(i);
        }
    }
}

/// ConTest AllocationVector with the blocks kept until the test ends: a (1, 1, 2) double
/// allocation.
///
/// Original: `AllocationVector` keeps one flag per block; `getFreeBlockIndex` (searching from
/// a random start in a random direction) and `markAsAllocatedBlock` (which throws if the block
/// is already allocated) are each `synchronized`, but a thread calls one after the other with
/// nothing holding them together. Two `TestThread`s each allocate some blocks, then free them.
///
/// This version keeps the allocated blocks until both threads are done (the test body frees
/// them), which is the simplest harness for the gap the ConTest bug description names. Rebuilt
/// with 4 blocks, 2 allocations per thread and a search for the lowest free block (the
/// original's random search only makes collisions less likely; a deterministic search keeps
/// the program deterministic). Choice left open: the second thread first does
/// [`ALLOCATION_PREP`] steps of unrelated work.
///
/// The bug: thread 1 finds free block b and is preempted before marking it; thread 2 finds the
/// same block and marks it; thread 1's mark then finds b allocated. One preemption, at the
/// vector, two threads: (1, 1, 2). The paper reports (2, 1, 2) for its harness, in which each
/// thread frees its blocks before finishing; that version is
/// [`allocation_vector_c2`]. PCT depth 2: one change point in the gap of the thread that finds
/// first. Fixed twin: finding and marking form one critical section.
pub fn allocation_vector(variant: Variant) {
    allocation_vector_test(variant, false);
}

/// ConTest AllocationVector with each thread freeing its blocks before it finishes, as in
/// ConTest's `TestThread` and the paper's Fig 12: the paper's (2, 1, 2) bug.
///
/// Original: as [`allocation_vector`], but each test thread ends by freeing every block it
/// allocated (Fig 12: `FindFreeBlock(); ASSERT(IsBlockFree(b)); MarkBlockAllocated(b); ...;
/// FreeAllBlocks()`). Rebuilt the same way (4 blocks, 2 allocations per thread, lowest free
/// block first, [`ALLOCATION_PREP`] steps of unrelated work in the second thread), with
/// `markAsAllocatedBlock`'s check as Fig 12's `ASSERT(IsBlockFree(b))`.
///
/// The bug needs exactly two preemptions: thread 1 is preempted between finding free block b
/// and marking it (first), thread 2 finds and marks b and must then be preempted before it
/// frees its blocks (second): if thread 2 ran on to its frees, b would be free again and
/// thread 1's mark would succeed. Both preemptions are at accesses of the vector: (2, 1, 2), as
/// in the paper. PCT depth 3: two change points, one in each window, the later one giving the
/// lower priority. Fixed twin: finding and marking form one critical section.
pub fn allocation_vector_c2(variant: Variant) {
    allocation_vector_test(variant, true);
}

// ---------------------------------------------------------------------------------------------
// BubbleSort
// ---------------------------------------------------------------------------------------------

/// The array to sort: reversed, so every pass matters.
const BUBBLE_INPUT: [i32; 4] = [4, 3, 2, 1];

/// Pass `p` (1-based) first does `(p - 1) * BUBBLE_PREP` steps of unrelated work.
pub const BUBBLE_PREP: u32 = 3;

/// One bubble pass over the shared array, holding its monitor for the whole pass. The buggy
/// pass `p` stops `p - 1` elements early, relying on passes `1..p` having already bubbled the
/// largest elements to the end; the fixed pass always scans the whole array.
fn bubble_pass(array: &Mutex<[i32; 4]>, pass: usize, variant: Variant) {
    let mut a = array.lock().unwrap();
    let pairs = match variant {
        Variant::Buggy => a.len() - pass,
        Variant::Fixed => a.len() - 1,
    };
    for j in 0..pairs {
        if a[j] > a[j + 1] {
            a.swap(j, j + 1);
        }
    }
}

/// ConTest BubbleSort (Table 1: (0, 0, 2)): one thread per bubble-sort pass over a shared
/// array; each pass is atomic, but the shortened passes rely on running in the order they
/// were started.
///
/// Original: a multi-threaded bubble sort in which sorter threads work on one shared array of
/// integers; its bug needs no preemption, only an unexpected order of two threads. The
/// paper gives no more detail, so the rebuild picks a bug of that shape: thread `p` runs pass
/// `p` of bubble sort under the array's monitor, and, as in a sequential bubble sort, pass `p`
/// compares only the first `n - p` pairs because passes `1..p` have moved the `p - 1` largest
/// elements to the end, which holds only if the passes run in order.
///
/// Rebuilt with the array `[4, 3, 2, 1]` and 3 pass threads, started in pass order, checked by
/// the test body after joining. Choice left open: pass `p` first does `(p - 1) *`
/// [`BUBBLE_PREP`] steps of unrelated work (thread start-up), so a random walk usually runs
/// the passes in order.
///
/// The bug: any later pass running before an earlier one, e.g. pass 3 before pass 2, leaves
/// the array unsorted (only the order 1, 2, 3 sorts `[4, 3, 2, 1]`). No preemption is needed
/// (the passes are atomic; `main` blocks in `join` and the scheduler simply picks a later pass
/// first), and the order of two threads matters: (0, 0, 2), as in the paper. PCT finds it
/// whenever the initial priorities misorder two passes (depth 1 suffices). Fixed twin: every
/// pass scans the whole array; three full passes sort four elements in any order.
pub fn bubble_sort(variant: Variant) {
    let array = Arc::new(Mutex::new(BUBBLE_INPUT));
    let mut threads: Vec<Box<dyn FnOnce() + Send>> = Vec::new();
    for pass in 1..BUBBLE_INPUT.len() {
        let array = array.clone();
        threads.push(Box::new(move || {
            unrelated_work((pass as u32 - 1) * BUBBLE_PREP);
            bubble_pass(&array, pass, variant);
        }));
    }
    run_threads(threads);
    let a = *array.lock().unwrap();
    assert!(
        a.windows(2).all(|w| w[0] <= w[1]),
        "bubblesort: the array must be sorted once every pass has run, got {a:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// BufWriter
// ---------------------------------------------------------------------------------------------

/// Writer threads.
const BUF_WRITERS: u32 = 2;

/// Records each writer appends.
const BUF_RECORDS: u32 = 2;

/// Steps of unrelated work the checker does before it waits for the writers.
pub const BUF_CHECKER_PREP: u32 = 3;

/// The shared buffer, and the count of writers still writing that the checker waits on.
struct SharedBuffer {
    records: Mutex<Vec<u32>>,
    active_writers: Mutex<u32>,
    idle: Condvar,
}

impl SharedBuffer {
    /// A writer: (buggy: registers itself as active,) appends its records, deregisters.
    fn writer(&self, id: u32, variant: Variant) {
        if variant == Variant::Buggy {
            *self.active_writers.lock().unwrap() += 1;
        }
        for r in 0..BUF_RECORDS {
            self.records.lock().unwrap().push(id * 100 + r);
        }
        let mut active = self.active_writers.lock().unwrap();
        *active -= 1;
        if *active == 0 {
            self.idle.notify_all();
        }
    }

    /// The checker: waits until no writer is active, then checks the buffer.
    fn checker(&self) {
        {
            let mut active = self.active_writers.lock().unwrap();
            while *active > 0 {
                active = self.idle.wait(active).unwrap();
            }
        }
        let records = self.records.lock().unwrap();
        assert_eq!(
            records.len() as u32,
            BUF_WRITERS * BUF_RECORDS,
            "bufwriter: once no writer is active the buffer must hold every record ({records:?})"
        );
    }
}

/// ConTest BufWriter (Table 1: (0, 0, 2)): writer threads append to a shared buffer and a
/// checker thread verifies it once the writers are done, but the count of active writers the
/// checker waits on is raised by each writer itself, so the checker can find it at zero before
/// a writer has started.
///
/// Original: several writer threads write into a shared buffer while a checker thread checks
/// its consistency; the paper reports a bug needing no preemption, only an unexpected order of
/// two threads. The rebuild gives it that shape with a racy counter of active writers: each
/// writer increments it when it starts and decrements it when it is done (under the buffer's
/// lock, with a notification at zero); the checker waits until the counter is zero and then
/// checks that the buffer holds every record.
///
/// Rebuilt with 2 writers of 2 records each and one checker, spawned after the writers.
/// Choice left open: the checker first does [`BUF_CHECKER_PREP`] steps of unrelated work
/// (opening its output), so a random walk usually lets both writers register before it looks.
///
/// The bug: the checker reads the counter before some writer has registered, sees zero (or
/// waits only for the registered writer) and checks a buffer missing that writer's records. No
/// preemption is needed (run the checker before the second writer starts), and the order of
/// the checker and that writer matters: (0, 0, 2), as in the paper. PCT finds it whenever the
/// checker outranks a writer (depth 1 suffices). Fixed twin: the test body registers both
/// writers before starting any thread.
pub fn buf_writer(variant: Variant) {
    let buffer = Arc::new(SharedBuffer {
        records: Mutex::new(Vec::new()),
        active_writers: Mutex::new(match variant {
            Variant::Buggy => 0,
            Variant::Fixed => BUF_WRITERS,
        }),
        idle: Condvar::new(),
    });
    let mut threads: Vec<Box<dyn FnOnce() + Send>> = Vec::new();
    for id in 0..BUF_WRITERS {
        let b = buffer.clone();
        threads.push(Box::new(move || b.writer(id, variant)));
    }
    let b = buffer.clone();
    threads.push(Box::new(move || {
        unrelated_work(BUF_CHECKER_PREP);
        b.checker();
    }));
    run_threads(threads);
}

// ---------------------------------------------------------------------------------------------
// LinkedList
// ---------------------------------------------------------------------------------------------

/// Builder threads.
const LIST_BUILDERS: usize = 2;

/// Nodes each builder appends.
const LIST_PER_BUILDER: usize = 2;

/// Nodes of the arena: the header (index 0) and one per element.
const LIST_NODES: usize = 1 + LIST_BUILDERS * LIST_PER_BUILDER;

/// "No next node".
const NIL: usize = usize::MAX;

/// Steps of unrelated work the second builder does before its first insertion.
pub const LIST_PREP: u32 = 10;

/// ConTest's `MyLinkedList`, with nodes in an arena: `next[i]` is node `i`'s `_next` field
/// (node 0 is the header), and `monitor` is the list's monitor.
struct MyLinkedList {
    next: Vec<Var<usize>>,
    monitor: Mutex<()>,
}

impl MyLinkedList {
    /// Walks from the header to the last node (bounded: the list has at most
    /// [`LIST_NODES`] nodes and no cycle).
    fn find_last(&self) -> usize {
        let mut itr = 0;
        for _ in 0..LIST_NODES {
            let next = self.next[itr].get();
            if next == NIL {
                return itr;
            }
            itr = next;
        }
        unreachable!("linkedlist: the list has no cycle")
    }

    /// `addLast(x)`: find the last node, then insert `node` after it. The buggy `insert` reads
    /// the successor and links the new node to it inside the monitor, but links the new node
    /// into the list after leaving it; the fixed `addLast` is `synchronized` as a whole.
    fn add_last(&self, node: usize, variant: Variant) {
        match variant {
            Variant::Buggy => {
                let last = self.find_last();
                {
                    let _monitor = self.monitor.lock().unwrap();
                    let successor = self.next[last].get();
                    self.next[node].set(successor);
                }
                self.next[last].set(node);
            }
            Variant::Fixed => {
                let _monitor = self.monitor.lock().unwrap();
                let last = self.find_last();
                let successor = self.next[last].get();
                self.next[node].set(successor);
                self.next[last].set(node);
            }
        }
    }

    /// `size()`: the number of nodes reachable from the header.
    fn size(&self) -> usize {
        let _monitor = self.monitor.lock().unwrap();
        let mut itr = 0;
        let mut size = 0;
        while size < LIST_NODES {
            let next = self.next[itr].get();
            if next == NIL {
                break;
            }
            size += 1;
            itr = next;
        }
        size
    }
}

/// ConTest LinkedList (Table 1: (1, 1, 2)): two builder threads append to one linked list;
/// `addLast` finds the last node without the lock and links the new node in after leaving the
/// lock, so a concurrent append between the two is overwritten.
///
/// Original: `MyLinkedList.addLast` walks to the last node unsynchronised and calls
/// `insert(x, itr)`, whose `synchronized` block creates the node pointing to the successor; the
/// buggy version leaves the block one statement too early and links the node in (writes the
/// last node's `_next`) outside it, as a comment in the original points out. Builder threads
/// each append a range of integers; `main` joins them and checks that the list size equals the
/// number of insertions.
///
/// Rebuilt with 2 builders appending 2 nodes each, nodes in an arena of `next` indices (every
/// `_next` field a [`Var`]). Choice left open: the second builder first does [`LIST_PREP`]
/// steps of unrelated work, so a random walk usually runs the two builders' appends apart.
///
/// The bug: builder 1 reads the last node's (null) successor inside the monitor, leaves it, and
/// is preempted before `last._next = node`; builder 2 appends its node after the same last node;
/// builder 1's write then replaces builder 2's link, and that node (with anything appended
/// after it) is lost. One preemption, at the last node's `_next`: (1, 1, 2), as in the paper.
/// PCT depth 2: one change point in builder 1's gap. Fixed twin: `addLast` holds the monitor
/// for the walk and the insertion (the remedy the original's comments suggest), which also
/// removes the races of the unsynchronised walk.
pub fn linked_list(variant: Variant) {
    let list = Arc::new(MyLinkedList {
        next: (0..LIST_NODES).map(|_| Var::new(NIL)).collect(),
        monitor: Mutex::new(()),
    });
    let mut threads: Vec<Box<dyn FnOnce() + Send>> = Vec::new();
    for builder in 0..LIST_BUILDERS {
        let list = list.clone();
        threads.push(Box::new(move || {
            unrelated_work(builder as u32 * LIST_PREP);
            for k in 0..LIST_PER_BUILDER {
                list.add_last(1 + builder * LIST_PER_BUILDER + k, variant);
            }
        }));
    }
    run_threads(threads);
    let size = list.size();
    assert_eq!(
        size,
        LIST_NODES - 1,
        "linkedlist: size must equal the number of insertions (an addLast lost a node)"
    );
}

// ---------------------------------------------------------------------------------------------
// Manager
// ---------------------------------------------------------------------------------------------

/// Blocks the manager hands out.
const MANAGER_BLOCKS: u32 = 2;

/// Client threads: the first [`MANAGER_BLOCKS`] start with a block the test body allocated for
/// them; the last one must allocate (and wait for) a block.
const MANAGER_CLIENTS: u32 = 3;

/// Client `i` works for `i * MANAGER_USE` steps of unrelated work before releasing its block.
pub const MANAGER_USE: u32 = 6;

/// A manager of free and allocated blocks: the free count, the monitor `allocate` holds, and
/// the condition clients wait on for a released block.
struct BlockManager {
    monitor: Mutex<()>,
    free: Var<u32>,
    released: Condvar,
}

impl BlockManager {
    /// `synchronized allocate()`: waits for a free block and takes it.
    fn allocate(&self) {
        let mut monitor = self.monitor.lock().unwrap();
        loop {
            let free = self.free.get();
            if free > 0 {
                self.free.set(free - 1);
                return;
            }
            monitor = self.released.wait(monitor).unwrap();
        }
    }

    /// `release()`: gives a block back and wakes waiting clients. The buggy version updates
    /// the free count before entering the monitor (only the notification is inside it); the
    /// fixed one does both inside.
    fn release(&self, variant: Variant) {
        match variant {
            Variant::Buggy => {
                let free = self.free.get();
                self.free.set(free + 1);
                let _monitor = self.monitor.lock().unwrap();
                self.released.notify_all();
            }
            Variant::Fixed => {
                let _monitor = self.monitor.lock().unwrap();
                let free = self.free.get();
                self.free.set(free + 1);
                self.released.notify_all();
            }
        }
    }
}

/// ConTest Manager (Table 1: (1, 1, 2)): client threads release blocks to a manager and
/// allocate blocks from it, waiting when none is free; the release updates the free count
/// outside the manager's monitor, so it can overwrite a concurrent release or allocation.
///
/// Original: the paper describes Manager as managing free and allocated blocks, with a
/// (1, 1, 2) bug; its code is not given. The rebuild is a block manager whose `allocate` is
/// `synchronized` and waits (`wait`/`notifyAll`) while no block is free, and whose `release`
/// does `free++` unsynchronised before entering the monitor to notify: a wrong synchronisation
/// that leaves the free count wrong.
///
/// Rebuilt with 2 blocks and 3 clients. The test body allocates both blocks before starting
/// the clients and hands one to each of the first two; the third allocates one (waiting until
/// a block is released). Each client works and then releases its block, and the test body
/// checks that both blocks are free at the end. Choices left open: the pre-allocated blocks
/// (with every client allocating its own block, the updates in a release's window would
/// balance out unless a second thread were preempted while holding its block: a c = 2 bug),
/// and client `i` works for `i *` [`MANAGER_USE`] steps of unrelated work, so a random walk
/// rarely runs two updates of the free count at once.
///
/// The bug: client 0's release reads the free count and is preempted before writing it back;
/// client 1 releases its block (and the waiting client may allocate it, use it and release it)
/// in between; the stale write loses client 1's release, and a block stays allocated forever.
/// One preemption, at the free count: (1, 1, 2), as in the paper. PCT depth 2: one change point
/// between the read and the write of a release. Fixed twin: `release` updates the count inside
/// the monitor.
pub fn manager(variant: Variant) {
    let m = Arc::new(BlockManager {
        monitor: Mutex::new(()),
        free: Var::new(MANAGER_BLOCKS),
        released: Condvar::new(),
    });
    for _ in 0..MANAGER_BLOCKS {
        m.allocate();
    }
    let mut threads: Vec<Box<dyn FnOnce() + Send>> = Vec::new();
    for i in 0..MANAGER_CLIENTS {
        let m = m.clone();
        threads.push(Box::new(move || {
            if i >= MANAGER_BLOCKS {
                m.allocate();
            }
            unrelated_work(i * MANAGER_USE);
            m.release(variant);
        }));
    }
    run_threads(threads);
    let free = {
        let _monitor = m.monitor.lock().unwrap();
        m.free.get()
    };
    assert_eq!(
        free, MANAGER_BLOCKS,
        "manager: every block must be free once all clients released theirs (an update of the free count was lost)"
    );
}

// ---------------------------------------------------------------------------------------------
// MergeSort
// ---------------------------------------------------------------------------------------------

/// The thread limit, counting the test body's own thread.
const MERGE_THREAD_LIMIT: i32 = 2;

/// The array to sort.
const MERGE_INPUT: [i32; 4] = [3, 1, 4, 2];

/// `MSort`'s static state: the count of sorting threads alive, and the class monitor its
/// static `synchronized` method holds.
struct SortThreads {
    class_monitor: Mutex<()>,
    alive: Var<i32>,
}

impl SortThreads {
    /// `static synchronized int AvailableThreadsState()`: how many threads (0, 1 or 2) the
    /// caller may start; throws if more threads are alive than the limit. The fixed version
    /// also reserves them, in the same critical section.
    fn available_threads_state(&self, variant: Variant) -> usize {
        let _class = self.class_monitor.lock().unwrap();
        let alive = self.alive.get();
        let available = MERGE_THREAD_LIMIT - alive;
        assert!(
            available >= 0,
            "mergesort: no more sorting threads may be alive than the limit ({alive} alive, limit {MERGE_THREAD_LIMIT})"
        );
        let granted = available.min(2);
        if variant == Variant::Fixed {
            self.alive.set(alive + granted);
        }
        granted as usize
    }

    /// Java's `DecreaseThreadCounter` (which increments the count), called after starting a
    /// thread: `synchronized` on the *instance*, so it excludes nobody; the fixed version has
    /// reserved the thread already.
    fn thread_started(&self, variant: Variant) {
        if variant == Variant::Buggy {
            let alive = self.alive.get();
            self.alive.set(alive + 1);
        }
    }

    /// Java's `IncreaseThreadCounter` (which decrements the count), called after joining a
    /// thread; the fixed version holds the class monitor.
    fn thread_ended(&self, variant: Variant) {
        let _class = (variant == Variant::Fixed).then(|| self.class_monitor.lock().unwrap());
        let alive = self.alive.get();
        self.alive.set(alive - 1);
    }
}

/// Merges two sorted vectors.
fn merge(a: Vec<i32>, b: Vec<i32>) -> Vec<i32> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i] < b[j] {
            out.push(a[i]);
            i += 1;
        } else {
            out.push(b[j]);
            j += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// `MSort.Sorting()`: split, ask how many threads are available, sort the halves in new
/// threads or recursively, merge.
fn merge_sorting(threads: &Arc<SortThreads>, data: Vec<i32>, variant: Variant) -> Vec<i32> {
    if data.len() <= 1 {
        return data;
    }
    // `CopyArrays`: one step per element copied into the halves.
    unrelated_work(data.len() as u32);
    let right = data[data.len() / 2..].to_vec();
    let mut left = data;
    left.truncate(left.len() / 2);
    let start = |half: Vec<i32>| {
        let t = threads.clone();
        let handle = thread::spawn(move || merge_sorting(&t, half, variant));
        threads.thread_started(variant);
        handle
    };
    let finish = |handle: thread::JoinHandle<Vec<i32>>| {
        let sorted = handle.join().unwrap();
        threads.thread_ended(variant);
        sorted
    };
    match threads.available_threads_state(variant) {
        0 => {
            let l = merge_sorting(threads, left, variant);
            let r = merge_sorting(threads, right, variant);
            merge(l, r)
        }
        1 => {
            let l = start(left);
            let r = merge_sorting(threads, right, variant);
            merge(finish(l), r)
        }
        _ => {
            let l = start(left);
            let r = start(right);
            let l = finish(l);
            merge(l, finish(r))
        }
    }
}

/// ConTest MergeSort (Table 1: (1, 1, 2)): a merge sort that sorts halves in new threads while
/// a thread limit allows; a thread checks the count of live threads and only later (and
/// without a common lock) increments it, so a new thread can check before its parent counted
/// it, and more threads run than the limit allows.
///
/// Original: `MSort.Sorting` copies its array into two halves (`CopyArrays`), calls the static
/// `synchronized` `AvailableThreadsState()` (the limit minus the static `m_iCurrentThreadsAlive`;
/// a negative value falls through to `throw new RuntimeException("BUG")`), then, if threads are
/// available, starts a son thread for a half and calls `DecreaseThreadCounter()`, which
/// increments the count but is `synchronized` on the instance, so it excludes nothing; after
/// joining a son it calls `IncreaseThreadCounter()` (the decrement), likewise. `main` resets
/// the count to 1 (itself) and sorts.
///
/// Rebuilt with the array `[3, 1, 4, 2]` and a limit of 2 threads (the test body's thread and
/// one son); `CopyArrays` is one step of unrelated work per element (it copies into private
/// arrays). No other choice was needed: the copy is the late thread's work that makes the bug
/// rare for a random walk.
///
/// The bug: the test body starts the left son and is preempted before counting it; the son
/// copies its two elements, sees one thread available (the count is still 1), starts a
/// grandson and counts it; when the test body counts the son, three threads are alive, and the
/// next `AvailableThreadsState` (the test body's, for its own right half) throws.
/// One preemption (the test body's, between starting the son and counting it), at the thread
/// count: (1, 1, 2), as in the paper. PCT depth 2: the son above the test body, one change point
/// lowering the son after its check, before the test body's next check. Because this
/// preemption is at a thread start, even depth 1 finds it when the initial priorities are son >
/// test body > grandson (the son runs as soon as it is started, and blocks joining the grandson
/// after counting it, which lets the test body run before the grandson). Fixed twin:
/// `AvailableThreadsState` reserves the threads it grants in its critical section, and the
/// decrement holds the class monitor too.
pub fn merge_sort(variant: Variant) {
    let threads = Arc::new(SortThreads {
        class_monitor: Mutex::new(()),
        alive: Var::new(1),
    });
    let sorted = merge_sorting(&threads, MERGE_INPUT.to_vec(), variant);
    let mut expected = MERGE_INPUT.to_vec();
    expected.sort_unstable();
    assert_eq!(sorted, expected, "mergesort: the result must be sorted");
}

// ---------------------------------------------------------------------------------------------
// Piper
// ---------------------------------------------------------------------------------------------

/// Slots of the plane's ring buffer (it holds at most `PIPER_SEATS - 1` passengers).
const PIPER_SEATS: usize = 2;

/// Producer/consumer pairs.
const PIPER_PAIRS: u32 = 2;

/// Passengers each producer boards and each consumer unloads.
const PIPER_TRIPS: u32 = 2;

/// Steps of unrelated work each consumer does before unloading (checking the passenger list).
pub const PIPER_CONSUMER_PREP: u32 = 2;

/// The plane: `Piper`'s ring buffer of passengers.
struct Plane {
    first: usize,
    last: usize,
    passengers: [u32; PIPER_SEATS],
}

/// ConTest's `Piper`: the plane under its monitor, and the monitor's wait set.
struct Piper {
    plane: Mutex<Plane>,
    changed: Condvar,
}

impl Piper {
    /// `synchronized void fillPlane(name)`: waits while the plane is full (buggy: once, with
    /// `if`; fixed: with `while`), boards the passenger, notifies all.
    fn fill_plane(&self, name: u32, variant: Variant) {
        let full = |p: &Plane| (p.last + 1) % PIPER_SEATS == p.first;
        let mut plane = self.plane.lock().unwrap();
        match variant {
            Variant::Buggy => {
                if full(&plane) {
                    plane = self.changed.wait(plane).unwrap();
                }
            }
            Variant::Fixed => {
                while full(&plane) {
                    plane = self.changed.wait(plane).unwrap();
                }
            }
        }
        let last = plane.last;
        plane.passengers[last] = name;
        plane.last = (last + 1) % PIPER_SEATS;
        self.changed.notify_all();
    }

    /// `synchronized String emptyPlane()`: waits while the plane is empty, unloads the first
    /// passenger, notifies all.
    fn empty_plane(&self) -> u32 {
        let mut plane = self.plane.lock().unwrap();
        while plane.first == plane.last {
            plane = self.changed.wait(plane).unwrap();
        }
        let first = plane.first;
        let name = plane.passengers[first];
        plane.first = (first + 1) % PIPER_SEATS;
        self.changed.notify_all();
        name
    }
}

/// ConTest Piper (Table 1: (1, 1, 2)): producers board passengers onto a plane (a bounded
/// ring buffer) and consumers unload them; `fillPlane` waits for a free seat with `if`
/// instead of `while`, so a producer woken after another one took the freed seat boards
/// anyway, and passengers vanish.
///
/// Original: `Piper.fillPlane` is `synchronized` and waits once, with `if`, while the plane is
/// full (the original's comment marks this as the bug), then boards the passenger and
/// `notifyAll()`s;
/// `emptyPlane` waits with `while` and likewise notifies all. `main` starts pairs of a consumer
/// and a producer thread; each producer boards `NUM_OF_SEATS` passengers and each consumer
/// unloads as many.
///
/// Rebuilt with a ring of 2 slots (one passenger aboard at most, as in the original's default
/// of 2 seats) and 2 pairs, each producer boarding 2 passengers and each consumer unloading 2
/// (the original starts more pairs). The test body joins all threads. Choice left open: each
/// consumer first does [`PIPER_CONSUMER_PREP`] steps of unrelated work, so a random walk less
/// often lets both producers queue up on a full plane.
///
/// The bug: two producers wait on a full plane (or one waits and the other arrives), a consumer
/// unloads and notifies all, one producer boards (the plane is full again) and the other,
/// not re-checking, boards too: it writes the free slot and advances `last` onto `first`, so
/// the plane looks empty with two passengers hidden in it. The consumers then wait forever for
/// passengers that never come: a deadlock. In the paper's measure (1, 1, 2); here the
/// schedule needing no preemption exists as well (both producers reach the full plane before
/// any consumer unloads), but the order of three threads (two producers and a consumer)
/// matters. PCT finds it with depth 1 (initial priorities only). Fixed twin: `while` instead of
/// `if`.
pub fn piper(variant: Variant) {
    let piper = Arc::new(Piper {
        plane: Mutex::new(Plane {
            first: 0,
            last: 0,
            passengers: [0; PIPER_SEATS],
        }),
        changed: Condvar::new(),
    });
    let mut threads: Vec<Box<dyn FnOnce() -> Vec<u32> + Send>> = Vec::new();
    for pair in 0..PIPER_PAIRS {
        let c = piper.clone();
        threads.push(Box::new(move || {
            unrelated_work(PIPER_CONSUMER_PREP);
            (0..PIPER_TRIPS).map(|_| c.empty_plane()).collect()
        }));
        let p = piper.clone();
        threads.push(Box::new(move || {
            for trip in 0..PIPER_TRIPS {
                p.fill_plane(pair * 100 + trip, variant);
            }
            Vec::new()
        }));
    }
    let mut unloaded: Vec<u32> = run_threads(threads).into_iter().flatten().collect();
    unloaded.sort_unstable();
    let mut boarded: Vec<u32> = (0..PIPER_PAIRS)
        .flat_map(|pair| (0..PIPER_TRIPS).map(move |trip| pair * 100 + trip))
        .collect();
    boarded.sort_unstable();
    assert_eq!(
        unloaded, boarded,
        "piper: every boarded passenger must be unloaded exactly once"
    );
}

// ---------------------------------------------------------------------------------------------
// PingPong
// ---------------------------------------------------------------------------------------------

/// Player threads.
const PINGPONG_PLAYERS: u32 = 2;

/// Steps of the rally: the original's 50 ms busy wait while the player is taken.
pub const PINGPONG_RALLY: u32 = 1;

/// Player `i` warms up for `i * PINGPONG_WARMUP` steps of unrelated work before playing.
pub const PINGPONG_WARMUP: u32 = 6;

/// ConTest's `PP`.
#[derive(Clone, Copy)]
struct PingPongPlayer {
    i: u32,
}

/// ConTest's `BuggedProgram`: the shared player field.
struct PingPongTable {
    player: Var<Option<PingPongPlayer>>,
    /// `pingPong`'s monitor in the fixed twin.
    monitor: Mutex<()>,
}

impl PingPongTable {
    /// `pingPong()`: uses the player (`getI()`, a NullPointerException if it is null), takes
    /// it off the table for the rally, and puts it back. `synchronized` in the fixed twin.
    fn ping_pong(&self, variant: Variant) {
        let _monitor = (variant == Variant::Fixed).then(|| self.monitor.lock().unwrap());
        let player = self.player.get();
        let _ = player
            .expect("pingpong: NullPointerException: pingPongPlayer is null in getI()")
            .i;
        let new_player = self.player.get();
        self.player.set(None);
        unrelated_work(PINGPONG_RALLY);
        self.player.set(new_player);
    }
}

/// ConTest PingPong (Table 1: (1, 1, 2)): player threads each take the shared player object
/// off the table (setting the field to null) for a rally and put it back, unsynchronised, so
/// another player can find the field null and dereference it.
///
/// Original: `BuggedProgram.pingPong()` calls `pingPongPlayer.getI()`, copies the field to
/// `newPlayer`, sets it to `null`, busy-waits 50 ms, and restores it; `doWork` starts
/// `threadNumber` `BugThread`s that each call `pingPong()`, and joins them.
///
/// Rebuilt with 2 player threads and the field as a [`Var`] holding an `Option` (null is
/// `None`; the dereference is an `expect`, a natural panic standing for the
/// NullPointerException). The test body joins the players and then dereferences the field once
/// more (the player must be back on the table). Choices left open: the busy wait is a time
/// window, not a step count; it is [`PINGPONG_RALLY`] step(s) of unrelated work here, and
/// player `i` warms up for `i *` [`PINGPONG_WARMUP`] steps first, so a random walk usually
/// runs the two rallies apart.
///
/// The bug: player 1 sets the field to null and is preempted in its rally; player 2 calls
/// `getI()` on null. (Or player 2 copies the null as its `newPlayer` and restores null after
/// player 1 restored the real one, and the final dereference fails.) One preemption, at the
/// player field: (1, 1, 2), as in the paper. PCT depth 2: one change point after player 1
/// nulls the field. Fixed twin: `pingPong` is `synchronized`.
pub fn ping_pong(variant: Variant) {
    let table = Arc::new(PingPongTable {
        player: Var::new(Some(PingPongPlayer { i: 0 })),
        monitor: Mutex::new(()),
    });
    let mut threads: Vec<Box<dyn FnOnce() + Send>> = Vec::new();
    for i in 0..PINGPONG_PLAYERS {
        let t = table.clone();
        threads.push(Box::new(move || {
            unrelated_work(i * PINGPONG_WARMUP);
            t.ping_pong(variant);
        }));
    }
    run_threads(threads);
    let player = {
        let _monitor = table.monitor.lock().unwrap();
        table.player.get()
    };
    let _ = player
        .expect("pingpong: NullPointerException: pingPongPlayer is null after the game")
        .i;
}

// ---------------------------------------------------------------------------------------------
// ProducerConsumer
// ---------------------------------------------------------------------------------------------

/// Producer threads.
const PC_PRODUCERS: u32 = 2;

/// Items each producer puts.
const PC_COUNT: u32 = 2;

/// Slots of the buffer.
const PC_SIZE: usize = 2;

/// The most items a consumer takes (the original's `received` array length).
const PC_RECEIVE_LIMIT: usize = 10;

/// Steps of unrelated work each producer does between its last put and `halt()`.
pub const PC_CLOSE_STEPS: u32 = 6;

/// The buffer's fields, guarded by its monitor.
struct PcState {
    slots: [u32; PC_SIZE],
    put_ptr: usize,
    get_ptr: usize,
    used: usize,
    halted: bool,
    /// Producers that have called `halt()` (used by the fixed twin).
    halts: u32,
}

/// ConTest's (KSU) `Buffer`: a bounded buffer with a `halt()` flag.
struct PcBuffer {
    state: Mutex<PcState>,
    changed: Condvar,
}

impl PcBuffer {
    /// `synchronized void put(x)`.
    fn put(&self, x: u32) {
        let mut s = self.state.lock().unwrap();
        while s.used == PC_SIZE {
            s = self.changed.wait(s).unwrap();
        }
        let p = s.put_ptr;
        s.slots[p] = x;
        s.put_ptr = (p + 1) % PC_SIZE;
        if s.used == 0 {
            self.changed.notify_all();
        }
        s.used += 1;
    }

    /// `synchronized Object get()`: `None` once the buffer is empty and halted.
    fn get(&self) -> Option<u32> {
        let mut s = self.state.lock().unwrap();
        while s.used == 0 && !s.halted {
            s = self.changed.wait(s).unwrap();
        }
        if s.used == 0 {
            return None;
        }
        let g = s.get_ptr;
        let x = s.slots[g];
        s.get_ptr = (g + 1) % PC_SIZE;
        if s.used == PC_SIZE {
            self.changed.notify_all();
        }
        s.used -= 1;
        Some(x)
    }

    /// `synchronized void halt()`: the buggy version halts the buffer when the first producer
    /// is done; the fixed one when the last is.
    fn halt(&self, variant: Variant) {
        let mut s = self.state.lock().unwrap();
        s.halts += 1;
        s.halted = match variant {
            Variant::Buggy => true,
            Variant::Fixed => s.halts == PC_PRODUCERS,
        };
        self.changed.notify_all();
    }
}

/// ConTest ProducerConsumer (Table 1: (0, 0, 2)): producers put items into a bounded buffer
/// and each calls `halt()` when done; a consumer stops at the first empty, halted buffer, so
/// when one producer finishes early the consumer quits while the other is still producing.
///
/// Original (the KSU/Wallentine `ProducerConsumer`): a `synchronized` bounded `Buffer` with
/// `put`, `get` (returning null once the buffer is empty and `halted`) and `halt()`; each
/// `Producer` puts `COUNT` items and then calls `halt()`; each `Consumer` gets items until
/// null; `main` joins the consumers and checks that they received `COUNT * PRODS` items.
///
/// Rebuilt with 2 producers putting 2 items each, one consumer (the original starts several;
/// they also add to the total through a per-consumer lock, a second, racy, bug left out here:
/// the consumer returns its count), and a 2-slot buffer, so a producer never blocks after the
/// consumer has quit. Choice left open: each producer does [`PC_CLOSE_STEPS`] steps of
/// unrelated work between its last put and `halt()`, so a random walk usually sees both
/// producers finish their puts before either halts.
///
/// The bug: one producer puts its items and halts, the consumer drains the buffer, sees it
/// empty and halted, and quits before the other producer's last put. No preemption is needed
/// (run the first producer, then the consumer, then the second producer: c = v = 0, as in the
/// paper), but the order of three threads matters here (the halting producer, the consumer and
/// the late producer), where the paper counts two. PCT finds it whenever the initial priorities
/// order them so (depth 1 suffices). Fixed twin: the buffer halts only when every producer has
/// called `halt()`.
pub fn producer_consumer(variant: Variant) {
    let buffer = Arc::new(PcBuffer {
        state: Mutex::new(PcState {
            slots: [0; PC_SIZE],
            put_ptr: 0,
            get_ptr: 0,
            used: 0,
            halted: false,
            halts: 0,
        }),
        changed: Condvar::new(),
    });
    let mut threads: Vec<Box<dyn FnOnce() -> u32 + Send>> = Vec::new();
    for producer in 0..PC_PRODUCERS {
        let b = buffer.clone();
        threads.push(Box::new(move || {
            for i in 0..PC_COUNT {
                b.put(producer * 100 + i);
            }
            unrelated_work(PC_CLOSE_STEPS);
            b.halt(variant);
            0
        }));
    }
    let b = buffer.clone();
    threads.push(Box::new(move || {
        let mut received = 0;
        while received < PC_RECEIVE_LIMIT as u32 {
            if b.get().is_none() {
                break;
            }
            received += 1;
        }
        received
    }));
    let total: u32 = run_threads(threads).into_iter().sum();
    assert_eq!(
        total,
        PC_PRODUCERS * PC_COUNT,
        "producerconsumer: the consumer must receive every produced item (it quit at an empty, halted buffer while a producer was still producing)"
    );
}

// ---------------------------------------------------------------------------------------------
// The table
// ---------------------------------------------------------------------------------------------

/// The programs of this module, in the order of the paper's Table 1.
pub static PROGRAMS: &[Program] = &[
    Program {
        name: "bounding-merge-sort",
        origin: "Bindal et al., Table 1 (ConTest MergeSort)",
        bug: BugKind::Assertion,
        summary: "a son thread checks the live-thread count before its parent counts it, so more sorting threads run than the limit allows",
        found_by: Finding {
            strategy: "pct:d=2",
            within: 100,
        },
        long: false,
        needs_weak_memory: false,
        run: merge_sort,
    },
    Program {
        name: "bounding-producer-consumer",
        origin: "Bindal et al., Table 1 (ConTest ProducerConsumer)",
        bug: BugKind::Assertion,
        summary: "the first producer to finish halts the buffer, and the consumer quits before the other producer's items arrive",
        found_by: Finding {
            strategy: "pct:d=1",
            within: 20,
        },
        long: false,
        needs_weak_memory: false,
        run: producer_consumer,
    },
    Program {
        name: "bounding-linked-list",
        origin: "Bindal et al., Table 1 (ConTest LinkedList)",
        bug: BugKind::Assertion,
        summary: "addLast links its node in after leaving the lock, overwriting a concurrent append",
        found_by: Finding {
            strategy: "pct:d=2",
            within: 200,
        },
        long: false,
        needs_weak_memory: false,
        run: linked_list,
    },
    Program {
        name: "bounding-bubble-sort",
        origin: "Bindal et al., Table 1 (ConTest BubbleSort)",
        bug: BugKind::Assertion,
        summary: "a shortened bubble-sort pass runs before the passes it relies on, leaving the array unsorted",
        found_by: Finding {
            strategy: "pct:d=1",
            within: 20,
        },
        long: false,
        needs_weak_memory: false,
        run: bubble_sort,
    },
    Program {
        name: "bounding-piper",
        origin: "Bindal et al., Table 1 (ConTest Piper)",
        bug: BugKind::Deadlock,
        summary: "fillPlane waits with `if` instead of `while`, so a woken producer boards onto a full plane; passengers vanish and the consumers wait forever",
        found_by: Finding {
            strategy: "pct:d=1",
            within: 100,
        },
        long: false,
        needs_weak_memory: false,
        run: piper,
    },
    Program {
        name: "bounding-allocation-vector",
        origin: "Bindal et al., Table 1 (ConTest AllocationVector)",
        bug: BugKind::Assertion,
        summary: "finding a free block and marking it are separate critical sections, so two threads are handed the same block",
        found_by: Finding {
            strategy: "pct:d=2",
            within: 100,
        },
        long: false,
        needs_weak_memory: false,
        run: allocation_vector,
    },
    Program {
        name: "bounding-allocation-vector-c2",
        origin: "Bindal et al., Table 1 and Fig 12 (ConTest AllocationVector)",
        bug: BugKind::Assertion,
        summary: "the same double allocation when each thread frees its blocks before finishing: the other thread must be preempted before its frees (c = 2)",
        found_by: Finding {
            strategy: "pct:d=3",
            within: 1_000,
        },
        long: false,
        needs_weak_memory: false,
        run: allocation_vector_c2,
    },
    Program {
        name: "bounding-buf-writer",
        origin: "Bindal et al., Table 1 (ConTest BufWriter)",
        bug: BugKind::Assertion,
        summary: "writers count themselves active only once running, so the checker can find no writer active and check an incomplete buffer",
        found_by: Finding {
            strategy: "pct:d=1",
            within: 20,
        },
        long: false,
        needs_weak_memory: false,
        run: buf_writer,
    },
    Program {
        name: "bounding-ping-pong",
        origin: "Bindal et al., Table 1 (ConTest PingPong)",
        bug: BugKind::Panic,
        summary: "a player takes the shared player object off the table (null) while another player dereferences it",
        found_by: Finding {
            strategy: "pct:d=2",
            within: 200,
        },
        long: false,
        needs_weak_memory: false,
        run: ping_pong,
    },
    Program {
        name: "bounding-manager",
        origin: "Bindal et al., Table 1 (ConTest Manager)",
        bug: BugKind::Assertion,
        summary: "release updates the free-block count outside the manager's monitor, losing a concurrent allocation or release",
        found_by: Finding {
            strategy: "pct:d=2",
            within: 200,
        },
        long: false,
        needs_weak_memory: false,
        run: manager,
    },
    Program {
        name: "bounding-account",
        origin: "Bindal et al., Table 1 (ConTest Account)",
        bug: BugKind::Assertion,
        summary: "transfer credits the other account without its lock, overwriting a concurrent deposit",
        found_by: Finding {
            strategy: "pct:d=2",
            within: 200,
        },
        long: false,
        needs_weak_memory: false,
        run: account,
    },
    Program {
        name: "bounding-airline-tickets",
        origin: "Bindal et al., Table 1 (ConTest AirlineTickets)",
        bug: BugKind::Assertion,
        summary: "main starts another seller before the overbooking seller sets StopSales, so more seats are sold than exist",
        found_by: Finding {
            strategy: "pct:d=1",
            within: 20,
        },
        long: false,
        needs_weak_memory: false,
        run: airline_tickets,
    },
];
