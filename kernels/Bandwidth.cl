// Copy4: out[i] = in[i] for n4 uint4 (16-byte) elements, one element per work-item. The runner
// times it once per run to know the device's copy bandwidth (bytes read plus written): the
// ceiling against which every variant's GB/s is reported as bandwidth utilisation.
// One pass, no barriers.
__kernel void Copy4(__global const uint4* in, __global uint4* out, uint n4) {
  const uint i = get_global_id(0);
  if (i < n4)
    out[i] = in[i];
}
