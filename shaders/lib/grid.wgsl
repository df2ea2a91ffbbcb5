// The linear workgroup index of a 1-D grid that grid1d (src/kernels/kernel.ts) split over x and y,
// because one dimension stops at maxComputeWorkgroupsPerDimension. The last row may hold a few
// workgroups past the end; callers skip them.
fn workgroupIndex(wid: vec3u, nwg: vec3u) -> u32 {
  return wid.y * nwg.x + wid.x;
}
