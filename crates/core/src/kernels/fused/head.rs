//! The head of a FUSE node that starts with creation steps: one heads a chain
//! (`FUSE[rand, sum]`), two are the generated operands of the binary step after them
//! (`FUSE[rand, rand, add, sum]`, see `prepare::fuse`). Streamed into the lane segment's
//! blocks when the fills stream, made whole otherwise.

use super::*;

/// How many creation steps lead a FUSE node: one heads a chain, two are the generated
/// operands of the binary step after them (see `prepare::fuse`).
fn leading_creations(steps: &[FuseStep]) -> usize {
    steps
        .iter()
        .take_while(|s| s.op.family() == crate::ops::Family::Creation)
        .count()
}

/// A FUSE node that starts with streamable creation steps (no inputs) and continues with a
/// lane segment over them: the segment's output and the index of the step after it.
pub(super) fn streamed_head(
    steps: &[FuseStep],
    table: &[OpArgs],
    inputs: &[&ArrayData],
) -> KResult<Option<(ArrayData, usize)>> {
    let k = leading_creations(steps);
    if k == 0 || !inputs.is_empty() {
        return Ok(None);
    }
    let mut sources = Vec::with_capacity(k);
    let mut dtypes: SmallVec<[DType; 2]> = SmallVec::new();
    let mut shape = None;
    for step in &steps[..k] {
        let args = table[step.args.index()].at(step.position);
        let OpArgs::Fill { fill, shape: s } = args.as_ref() else {
            return Ok(None);
        };
        let Some((stream, dtype)) = Stream::new(fill) else {
            return Ok(None);
        };
        sources.push(Source::Stream(stream));
        dtypes.push(dtype);
        shape = Some(s.clone());
    }
    let (Some(shape), Some(plan)) = (shape, plan_segment(steps, k, table, &dtypes, true)) else {
        return Ok(None);
    };
    let mut sources = sources.into_iter();
    let first = sources.next().expect("k > 0 sources");
    let out = eval_sources(&plan, shape, first, sources.collect())?;
    Ok(Some((out, plan.end)))
}

/// Generated operands that do not stream after all: made whole, then their binary step.
pub(super) fn generated_operands_whole(
    steps: &[FuseStep],
    table: &[OpArgs],
) -> KResult<Option<(ArrayData, usize)>> {
    let k = leading_creations(steps);
    if k < 2 || k >= steps.len() {
        return Ok(None);
    }
    let operands = steps[..k]
        .iter()
        .map(|s| crate::kernels::apply(s.op, &table[s.args.index()].at(s.position), table, &[]))
        .collect::<KResult<Vec<_>>>()?;
    let refs: Vec<&ArrayData> = operands.iter().collect();
    let step = steps[k];
    Ok(Some((
        crate::kernels::apply(step.op, &table[step.args.index()], table, &refs)?,
        k + 1,
    )))
}
