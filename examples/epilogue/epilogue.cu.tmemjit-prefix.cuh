#line 1 "/work/wt-settings/examples/epilogue/epilogue.cu"
// A GEMM-style epilogue whose accumulator sits in TMEM, specialized at run time for the layout
// an autotuner picks (docs/specialization.md). One warpgroup per CTA, one tile per CTA:
//   1. alloc TMEM (one warp), fence / barrier / fence;
//   2. store the accumulator into TMEM chunk by chunk with acc_store (the stand-in for the MMA);
//   3. load it chunk by chunk with acc_load, issuing chunk j + 1 before chunk j is used
//      (wait = false: acc_load_wait() waits for the loads in flight);
//   4. out = alpha * acc + beta * bias[column], at the index acc_load_coord gives each register;
//   5. fence / barrier / fence, dealloc.
// Each transfer moves one chunk of `chunk_columns` columns of the tile; the column argument
// offsets it. The layouts (their specs in layouts/) decide which thread holds which element;
// this source never changes.
