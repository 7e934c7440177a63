//! Compressed sparse rows: adjacency lists of a whole graph in two `Vec`s.

use serde::{Deserialize, Serialize};

/// Row `i`'s neighbours are `targets[offsets[i]..offsets[i + 1]]`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Csr {
    #[serde(with = "super::packed::u32s")]
    offsets: Vec<u32>,
    #[serde(with = "super::packed::u32s")]
    targets: Vec<u32>,
}

impl Csr {
    /// An empty CSR ready to receive rows in order with [`Csr::push_row`].
    pub fn with_capacity(rows: usize, edges: usize) -> Self {
        let mut offsets = Vec::with_capacity(rows + 1);
        offsets.push(0);
        Self {
            offsets,
            targets: Vec::with_capacity(edges),
        }
    }

    /// Room for `rows` rows and `edges` edges in all.
    pub fn reserve(&mut self, rows: usize, edges: usize) {
        self.offsets
            .reserve((rows + 1).saturating_sub(self.offsets.len()));
        self.targets
            .reserve(edges.saturating_sub(self.targets.len()));
    }

    /// A copy with room for `more`'s rows as well.
    pub fn copy_with_room(&self, more: &Csr) -> Self {
        let mut copy = Self::with_capacity(self.rows() + more.rows(), self.edges() + more.edges());
        copy.offsets.truncate(0);
        copy.offsets.extend_from_slice(&self.offsets);
        copy.targets.extend_from_slice(&self.targets);
        copy
    }

    pub fn push_row(&mut self, row: impl IntoIterator<Item = u32>) {
        self.targets.extend(row);
        self.offsets.push(self.targets.len() as u32);
    }

    /// Builds the CSR of `rows` rows from `(row, target)` edges, keeping edge order per row.
    pub fn from_edges(rows: usize, edges: impl Iterator<Item = (u32, u32)> + Clone) -> Self {
        let mut counts = vec![0u32; rows + 1];
        for (r, _) in edges.clone() {
            counts[r as usize + 1] += 1;
        }
        for i in 0..rows {
            counts[i + 1] += counts[i];
        }
        let mut fill = counts.clone();
        let mut targets = vec![0u32; counts[rows] as usize];
        for (r, t) in edges {
            let slot = &mut fill[r as usize];
            targets[*slot as usize] = t;
            *slot += 1;
        }
        Self {
            offsets: counts,
            targets,
        }
    }

    /// The transpose: for every edge `r -> t`, an edge `t -> r`.
    pub fn transposed(&self, rows: usize) -> Self {
        Self::from_edges(
            rows,
            (0..self.rows()).flat_map(move |r| self.row(r).iter().map(move |&t| (t, r as u32))),
        )
    }

    #[inline]
    pub fn row(&self, i: usize) -> &[u32] {
        &self.targets[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }

    pub(crate) fn targets_mut(&mut self) -> &mut [u32] {
        &mut self.targets
    }

    pub fn rows(&self) -> usize {
        self.offsets.len() - 1
    }

    pub fn edges(&self) -> usize {
        self.targets.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_rows_and_transpose() {
        //  0 -> 1, 0 -> 2, 1 -> 2
        let csr = Csr::from_edges(3, [(0, 1), (0, 2), (1, 2)].into_iter());
        assert_eq!(csr.row(0), &[1, 2]);
        assert_eq!(csr.row(2), &[] as &[u32]);
        let t = csr.transposed(3);
        assert_eq!(t.row(2), &[0, 1]);
        assert_eq!(t.row(0), &[] as &[u32]);
        assert_eq!(t.edges(), 3);
    }
}
