//! `shuttle::rand`: random numbers that the strategy chooses and a replay token records, behind
//! rand 0.8's `Rng` and `RngCore` traits.

pub use rand::{Rng, RngCore};

pub mod rngs {
    //! The generator type.

    /// A generator whose every value comes from `interleave::rand`, so it is part of the
    /// explored schedule.
    #[derive(Clone, Debug, Default)]
    pub struct ThreadRng {
        _private: (),
    }

    impl rand::RngCore for ThreadRng {
        fn next_u32(&mut self) -> u32 {
            self.next_u64() as u32
        }

        fn next_u64(&mut self) -> u64 {
            interleave::rand::random_range(0..u64::MAX)
        }

        fn fill_bytes(&mut self, dest: &mut [u8]) {
            for chunk in dest.chunks_mut(8) {
                let bytes = self.next_u64().to_le_bytes();
                chunk.copy_from_slice(&bytes[..chunk.len()]);
            }
        }

        fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rand::Error> {
            self.fill_bytes(dest);
            Ok(())
        }
    }
}

/// The generator of the running thread.
pub fn thread_rng() -> rngs::ThreadRng {
    rngs::ThreadRng::default()
}
