//! A topological order maintained under edge insertion (Pearce and Kelly), with the atoms on
//! a refused edge's cycle as its explanation.

/// An edge of the order graph, with the atom literal that put it there (`None` for hard edges).
#[derive(Clone, Copy, Debug)]
pub(super) struct Edge {
    pub(super) from: u32,
    pub(super) to: u32,
    pub(super) reason: Option<batsat::Lit>,
}

/// A directed acyclic graph with a topological order maintained under edge insertion by
/// Pearce and Kelly's algorithm (*A dynamic topological sort algorithm for directed acyclic
/// graphs*, JEA 2007). Edges are removed only in the reverse order of their insertion.
pub(super) struct IncrementalOrder {
    /// Each event's place in the topological order.
    pub(super) position: Vec<u32>,
    /// Indices into `edges` of each event's outgoing and incoming edges, in insertion order.
    pub(super) outgoing: Vec<Vec<u32>>,
    pub(super) incoming: Vec<Vec<u32>>,
    /// All edges, in insertion order.
    pub(super) edges: Vec<Edge>,
    /// The search epoch each event was last visited in.
    pub(super) visited: Vec<u32>,
    pub(super) epoch: u32,
    /// The edge the forward search reached each event by, to rebuild a cycle.
    pub(super) reached_by: Vec<u32>,
    pub(super) forward: Vec<u32>,
    pub(super) backward: Vec<u32>,
    pub(super) places: Vec<u32>,
    /// After a refused insertion: the reasons of the cycle's edges, the refused edge's first.
    pub(super) cycle_reasons: Vec<batsat::Lit>,
}

impl IncrementalOrder {
    pub(super) fn new(preferred_position: &[u32]) -> IncrementalOrder {
        let events = preferred_position.len();
        IncrementalOrder {
            position: preferred_position.to_vec(),
            outgoing: vec![Vec::new(); events],
            incoming: vec![Vec::new(); events],
            edges: Vec::new(),
            visited: vec![0; events],
            epoch: 0,
            reached_by: vec![0; events],
            forward: Vec::new(),
            backward: Vec::new(),
            places: Vec::new(),
            cycle_reasons: Vec::new(),
        }
    }

    pub(super) fn next_epoch(&mut self) {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            // The stamps wrapped around: clear them so that no stale stamp matches.
            self.visited.fill(0);
            self.epoch = 1;
        }
    }

    /// Adds the edge `from → to` and returns true, or returns false and leaves the graph
    /// unchanged if the edge would close a cycle; `cycle_reasons` then holds the cycle's reasons.
    pub(super) fn insert(&mut self, from: u32, to: u32, reason: Option<batsat::Lit>) -> bool {
        let lower = self.position[to as usize];
        let upper = self.position[from as usize];
        if lower > upper {
            self.push_edge(from, to, reason);
            return true;
        }
        self.cycle_reasons.clear();
        self.cycle_reasons.extend(reason);
        if from == to {
            return false;
        }

        // Forward: the events reachable from `to` that precede `from` in the current order. Every
        // path from `to` to `from` stays among them, so reaching `from` is the only way to find a
        // cycle.
        self.next_epoch();
        self.forward.clear();
        self.forward.push(to);
        self.visited[to as usize] = self.epoch;
        let mut head = 0;
        while head < self.forward.len() {
            let event = self.forward[head];
            head += 1;
            for &edge in &self.outgoing[event as usize] {
                let next = self.edges[edge as usize].to;
                if next == from {
                    self.collect_cycle(to, event, edge);
                    return false;
                }
                if self.position[next as usize] < upper && self.visited[next as usize] != self.epoch
                {
                    self.visited[next as usize] = self.epoch;
                    self.reached_by[next as usize] = edge;
                    self.forward.push(next);
                }
            }
        }

        // Backward: the events that reach `from` and follow `to` in the current order. No event
        // is in both sets (that would be a cycle), so one epoch serves both searches.
        self.backward.clear();
        self.backward.push(from);
        self.visited[from as usize] = self.epoch;
        let mut head = 0;
        while head < self.backward.len() {
            let event = self.backward[head];
            head += 1;
            for &edge in &self.incoming[event as usize] {
                let previous = self.edges[edge as usize].from;
                if self.position[previous as usize] > lower
                    && self.visited[previous as usize] != self.epoch
                {
                    self.visited[previous as usize] = self.epoch;
                    self.backward.push(previous);
                }
            }
        }

        // Reorder: the backward set moves before the forward set, both keeping their relative
        // order, into the places the two sets occupied.
        let position = &self.position;
        self.forward
            .sort_unstable_by_key(|&event| position[event as usize]);
        self.backward
            .sort_unstable_by_key(|&event| position[event as usize]);
        self.places.clear();
        self.places.extend(
            self.backward
                .iter()
                .chain(self.forward.iter())
                .map(|&event| position[event as usize]),
        );
        self.places.sort_unstable();
        for (&event, &place) in self
            .backward
            .iter()
            .chain(self.forward.iter())
            .zip(&self.places)
        {
            self.position[event as usize] = place;
        }
        self.push_edge(from, to, reason);
        true
    }

    /// Collects the reasons of the path the forward search found from `start` to `last`, and of
    /// `closing`, the edge from `last` back to the refused edge's source.
    pub(super) fn collect_cycle(&mut self, start: u32, last: u32, closing: u32) {
        self.cycle_reasons
            .extend(self.edges[closing as usize].reason);
        let mut event = last;
        while event != start {
            let edge = self.edges[self.reached_by[event as usize] as usize];
            self.cycle_reasons.extend(edge.reason);
            event = edge.from;
        }
    }

    pub(super) fn push_edge(&mut self, from: u32, to: u32, reason: Option<batsat::Lit>) {
        let index = self.edges.len() as u32;
        self.edges.push(Edge { from, to, reason });
        self.outgoing[from as usize].push(index);
        self.incoming[to as usize].push(index);
    }

    /// Removes the edges after the first `count`. The topological order stays valid, since it
    /// only ever had to respect more edges.
    pub(super) fn truncate(&mut self, count: usize) {
        while self.edges.len() > count {
            let Some(edge) = self.edges.pop() else { break };
            // Edges leave in the reverse order they came, so each is last in both its lists.
            self.outgoing[edge.from as usize].pop();
            self.incoming[edge.to as usize].pop();
        }
    }
}
