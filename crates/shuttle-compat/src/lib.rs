//! shuttle 0.9's public API over interleave (in progress).
