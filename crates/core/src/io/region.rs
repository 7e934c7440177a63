//! A chunk's region of a C-order array as runs of consecutive elements: the unit of one
//! `pread`/`pwrite`. The innermost dimensions the region spans whole merge into one run, so
//! a chunk of whole rows is a single run.

/// Calls `f(element offset in the array, element offset in the region, run length)` for each
/// run of region `offset..offset+shape` of an array of `full` shape, in C order.
pub fn for_each_run(
    full: &[usize],
    offset: &[usize],
    shape: &[usize],
    mut f: impl FnMut(u64, usize, usize) -> Result<(), super::IoError>,
) -> Result<(), super::IoError> {
    let n = full.len();
    if shape.contains(&0) {
        return Ok(());
    }
    // strides[d]: elements between consecutive indices of dimension d.
    let mut strides = vec![1u64; n];
    for d in (0..n.saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * full[d + 1] as u64;
    }
    // k: the first dimension of the run; every dimension after it is spanned whole.
    let mut k = n;
    let mut run = 1usize;
    while k > 0 {
        k -= 1;
        run *= shape[k];
        if shape[k] != full[k] {
            break;
        }
    }
    if n == 0 {
        return f(0, 0, 1);
    }
    let outer = &shape[..k];
    let mut idx = vec![0usize; k];
    let mut done = 0usize;
    loop {
        let mut at = offset[k] as u64 * strides[k];
        for d in 0..k {
            at += (offset[d] + idx[d]) as u64 * strides[d];
        }
        f(at, done, run)?;
        done += run;
        // Next outer index (odometer); finished when it wraps.
        let mut d = k;
        loop {
            if d == 0 {
                return Ok(());
            }
            d -= 1;
            idx[d] += 1;
            if idx[d] < outer[d] {
                break;
            }
            idx[d] = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::for_each_run;

    fn runs(full: &[usize], offset: &[usize], shape: &[usize]) -> Vec<(u64, usize, usize)> {
        let mut out = Vec::new();
        for_each_run(full, offset, shape, |a, b, c| {
            out.push((a, b, c));
            Ok(())
        })
        .unwrap();
        out
    }

    #[test]
    fn whole_rows_are_one_run_and_blocks_one_per_row() {
        assert_eq!(runs(&[4, 5], &[1, 0], &[2, 5]), vec![(5, 0, 10)]);
        assert_eq!(runs(&[4, 5], &[1, 2], &[2, 3]), vec![(7, 0, 3), (12, 3, 3)]);
        assert_eq!(runs(&[], &[], &[]), vec![(0, 0, 1)]);
        assert_eq!(runs(&[7], &[3], &[4]), vec![(3, 0, 4)]);
        assert_eq!(runs(&[4, 0], &[0, 0], &[4, 0]), vec![]);
        // 3-D: the last two dims whole, the first partial.
        assert_eq!(runs(&[3, 2, 2], &[1, 0, 0], &[2, 2, 2]), vec![(4, 0, 8)]);
        // Middle dim partial: one run per outer index.
        assert_eq!(
            runs(&[2, 3, 2], &[0, 1, 0], &[2, 2, 2]),
            vec![(2, 0, 4), (8, 4, 4)]
        );
    }
}
