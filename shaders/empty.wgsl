// An empty kernel: timing many dispatches of it gives the fixed cost of one dispatch.
@compute @workgroup_size(1)
fn main() {}
