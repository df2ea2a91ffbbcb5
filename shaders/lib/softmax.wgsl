// Stands in for -inf in the online softmax (WGSL has no infinity literal): exp(NEG_BIG - finite) is
// exactly 0, and a running maximum that starts here is replaced by the first real score.
const NEG_BIG: f32 = -1.0e38;
