"""The functions of the Python array API standard, 2024.12 (top-level namespace, ``linalg``
excluded), for ``ar.array_api_coverage()``."""

ARRAY_API_FUNCTIONS = """
    arange asarray empty empty_like eye from_dlpack full full_like linspace meshgrid ones
    ones_like tril triu zeros zeros_like
    astype can_cast finfo iinfo isdtype result_type
    abs acos acosh add asin asinh atan atan2 atanh bitwise_and bitwise_left_shift
    bitwise_invert bitwise_or bitwise_right_shift bitwise_xor ceil clip conj copysign cos cosh
    divide equal exp expm1 floor floor_divide greater greater_equal hypot imag isfinite isinf
    isnan less less_equal log log1p log2 log10 logaddexp logical_and logical_not logical_or
    logical_xor maximum minimum multiply negative nextafter not_equal positive pow real
    reciprocal remainder round
    sign signbit sin sinh square sqrt subtract tan tanh trunc
    matmul matrix_transpose tensordot vecdot
    broadcast_arrays broadcast_to concat expand_dims flip moveaxis permute_dims repeat reshape
    roll squeeze stack tile unstack
    argmax argmin nonzero searchsorted where
    unique_all unique_counts unique_inverse unique_values
    argsort sort
    count_nonzero cumulative_prod cumulative_sum diff max mean min prod std sum var
    all any
    take take_along_axis
""".split()
