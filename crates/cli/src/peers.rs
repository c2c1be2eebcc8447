//! The one door to the shuttle and loom columns, which exist only in a build with the `peers`
//! feature: building shuttle and loom takes most of a fresh build, so the main job leaves them
//! out, and a build without them refuses peer columns with the command that has them.

#[cfg(feature = "peers")]
pub use interleave_peers::suite_runs::{PeerSpec, PEER_NAMES};
#[cfg(feature = "peers")]
pub use interleave_peers::worker;

/// Why a build without the `peers` feature refuses a peer column, and how to get one.
#[cfg(not(feature = "peers"))]
pub const NOT_BUILT: &str = "the shuttle and loom columns are not in this build; build the CLI \
     with them: cargo run --release -p interleave-cli --features peers -- bench --peers";

/// Whether `spec` names a peer column (`shuttle-pct:d=3`, `loom:b=2`) rather than an interleave
/// strategy.
pub fn is_peer_spec(spec: &str) -> bool {
    spec.starts_with("shuttle") || spec.starts_with("loom")
}
