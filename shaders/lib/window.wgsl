// Sliding-window attention (Mistral's): a query at position `pos` sees keys
// max(0, pos − window + 1) ..= pos; window = 0 is full causal attention. Every attention family
// starts its walk over the keys here, so none of them reads a page the window has let go of.
fn kvFirstVisible(pos: u32, window: u32) -> u32 {
  if (window == 0u || pos < window) { return 0u; }
  return pos + 1u - window;
}
