// Device functions for users' kernels (docs/design.md §Specialization): goldens of both forms,
// NAME_coord against the register view element by element for every test spec, the options'
// signatures, names checked as C identifiers, and the CUDA form compiled by NVRTC (two transfers in
// one file).
#include "tmem/specialize.h"

#include <gtest/gtest.h>

#include <climits>
#include <string>
#include <vector>

#include "common/golden_util.h"
#include "common/spec_fixtures.h"
#include "kernels/device_function.h"
#include "runtime/compile/sass.h"
#include "tmem/check.h"
#include "tmem/compile.h"
#include "tmem/image.h"

namespace {

using tmemjit_test::SpecText;

tmem::DeviceFunctionOptions named(std::string name, tmem::Language language, bool wait = true) {
  tmem::DeviceFunctionOptions options;
  options.name = std::move(name);
  options.language = language;
  options.wait = wait;
  return options;
}

std::string source_of(const SpecText& text, const tmem::DeviceFunctionOptions& options,
                      tmem::Target target = tmem::Target::kSm100a) {
  auto function = tmem::device_function(text.make(), options, target);
  EXPECT_TRUE(function.ok()) << function.error().full_text();
  return function.ok() ? function->source : std::string();
}

TEST(DeviceFunctionGolden, SeedLoadCuda) {
  tmemjit_test::expect_golden(
      "seed_device_function.cu",
      source_of(tmemjit_test::seed_layout_b(false), named("acc_load", tmem::Language::kCuda)));
}

TEST(DeviceFunctionGolden, SeedLoadPtx) {
  tmemjit_test::expect_golden(
      "seed_device_function.ptx",
      source_of(tmemjit_test::seed_layout_b(false), named("acc_load", tmem::Language::kPtx)));
}

TEST(DeviceFunctionGolden, SeedStoreEmulatedCuda) {
  tmemjit_test::expect_golden(
      "seed_device_function_sm90.cu",
      source_of(tmemjit_test::seed_layout_b(true), named("acc_store", tmem::Language::kCuda),
                tmem::Target::kSm90));
}

// Every spec the suites share: the seed's three examples both ways and every opcode's identity.
std::vector<SpecText> all_test_specs() {
  std::vector<SpecText> specs;
  for (bool store : {true, false}) {
    specs.push_back(tmemjit_test::seed_layout_b(store));
    specs.push_back(tmemjit_test::seed_pack(store));
    specs.push_back(tmemjit_test::seed_split(store));
  }
  for (tmem::Direction direction : {tmem::Direction::kStore, tmem::Direction::kLoad})
    for (tmem::Shape shape : tmem::all_shapes())
      for (int num : {1, 2, 4, 8, 16, 32, 64, 128})
        for (bool pack : {false, true}) {
          auto op = tmem::Opcode::make(direction, shape, num, pack);
          if (!op) continue;
          specs.push_back(tmemjit_test::identity_spec(*op));
          if (op->atom_rows() == 16 && !op->is_split())
            specs.push_back(tmemjit_test::identity_spec(*op, 16));
        }
  return specs;
}

// The logical index of the register tensor's element at view coordinate `coord`.
std::vector<int> element_index(const tmem::View& view, const std::vector<std::int64_t>& coord) {
  std::int64_t flat = 0;
  for (size_t d = 0; d < coord.size(); ++d) flat = flat * view.shape()[d] + coord[d];
  std::int64_t base = view.base_index(flat);
  const auto shape = view.base().shape();
  std::vector<int> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = static_cast<int>(base % shape[d]);
    base /= shape[d];
  }
  return index;
}

std::int64_t evaluate(const tmem::kernels::CoordTerms& terms, int thread, int slot) {
  std::int64_t value = terms.constant;
  for (size_t b = 0; b < terms.thread_bits.size(); ++b)
    if (thread >> b & 1) value += terms.thread_bits[b];
  for (size_t b = 0; b < terms.slot_bits.size(); ++b)
    if (slot >> b & 1) value += terms.slot_bits[b];
  return value;
}

// NAME_coord(thread, slot) is the register operand's element that the plan's instruction moves
// in that thread and slot: walked here from the plan and the native image
// (docs/transfer-semantics.md §Rules rules 1-2), independently of coord_map, which walks the
// register view's layout. The closed form the generators print gives the same.
TEST(DeviceFunctionCoord, EqualsTheRegisterViewsElementForEverySlotOfEveryTestSpec) {
  int checked_specs = 0;
  for (const SpecText& text : all_test_specs()) {
    const tmem::TransferSpec spec = text.make();
    auto plan = tmem::check(spec);
    ASSERT_TRUE(plan.ok()) << text.op << "\n" << plan.error().full_text();
    SCOPED_TRACE(text.op + " " + text.tmem);
    auto code = tmem::kernels::prepare_transfer(spec, {});
    ASSERT_TRUE(code.ok()) << code.error().full_text();
    const tmem::kernels::CoordMap& map = code->coord;
    ASSERT_TRUE(map.expressible);
    EXPECT_TRUE(map.additive) << "every test spec has an additive coord map";
    const tmem::View& regs = spec.regs();
    const int split = plan->op.is_split() ? 1 : 0;
    std::vector<std::vector<bool>> seen(static_cast<size_t>(map.threads),
                                        std::vector<bool>(static_cast<size_t>(map.slots)));
    for (int g = 0; g < plan->warps(); ++g)
      for (int k = 0; k < plan->instructions_per_warp(); ++k)
        for (int lane = 0; lane < 32; ++lane)
          for (int r = 0; r < plan->op.regs_per_thread(); ++r) {
            const tmem::AtomCoord at = tmem::image(plan->op, lane, r);
            std::vector<std::int64_t> coord;
            if (plan->scope.group_rank()) coord.push_back(g);
            std::int64_t rest = k;
            std::vector<std::int64_t> repeat(plan->repeat_shape.size());
            for (size_t d = plan->repeat_shape.size(); d-- > 0;) {
              repeat[d] = rest % plan->repeat_shape[d];
              rest /= plan->repeat_shape[d];
            }
            coord.insert(coord.end(), repeat.begin(), repeat.end());
            if (split) coord.push_back(at.access);
            coord.push_back(at.row);
            coord.push_back(at.col);
            const std::vector<int> expected = element_index(regs, coord);
            const int thread = 32 * g + lane;
            const int slot = plan->repeats[static_cast<size_t>(k)].slots[static_cast<size_t>(r)];
            seen[static_cast<size_t>(thread)][static_cast<size_t>(slot)] = true;
            for (int d = 0; d < map.rank; ++d) {
              ASSERT_EQ(map.at(thread, slot, d), expected[static_cast<size_t>(d)])
                  << "thread " << thread << " slot " << slot << " dim " << d;
              ASSERT_EQ(evaluate(map.dims[static_cast<size_t>(d)], thread, slot),
                        expected[static_cast<size_t>(d)]);
            }
          }
    // Slots the plan does not move read -1.
    for (int t = 0; t < map.threads; ++t)
      for (int s = 0; s < map.slots; ++s)
        if (!seen[static_cast<size_t>(t)][static_cast<size_t>(s)]) {
          for (int d = 0; d < map.rank; ++d) ASSERT_EQ(map.at(t, s, d), -1);
          ASSERT_FALSE(map.slot_used(s));
        }
    ++checked_specs;
  }
  EXPECT_GT(checked_specs, 100);
}

TEST(DeviceFunction, OptionsShapeTheSignatureAndTheWait) {
  const tmem::TransferSpec spec = tmemjit_test::seed_layout_b(false).make();
  tmem::DeviceFunctionOptions options = named("acc", tmem::Language::kCuda, /*wait=*/false);
  options.warp_argument = true;
  options.column_argument = true;
  auto cuda = tmem::device_function(spec, options);
  ASSERT_TRUE(cuda.ok()) << cuda.error().full_text();
  EXPECT_EQ(cuda->signature,
            "__device__ void acc(uint32_t tmem_base, uint32_t (&regs)[64], uint32_t warp, "
            "uint32_t column)");
  EXPECT_EQ(cuda->direction, tmem::Direction::kLoad);
  EXPECT_EQ(cuda->regs_per_thread, 64);
  EXPECT_EQ(cuda->coord_rank, 2);
  const std::string& text = cuda->source;
  EXPECT_NE(text.find("constexpr int acc_regs = 64;"), std::string::npos);
  EXPECT_NE(text.find("void acc(unsigned int tmem_base, unsigned int (&regs)[64], unsigned int "
                      "warp, unsigned int column)"),
            std::string::npos);
  EXPECT_NE(text.find("void acc(unsigned int tmem_base, float (&regs)[64]"), std::string::npos)
      << "the register view is f32";
  EXPECT_NE(text.find("void acc_wait() { asm volatile(\"tcgen05.wait::ld.sync.aligned;\""),
            std::string::npos);
  EXPECT_NE(text.find("void acc_coord(unsigned int thread, int slot, int (&index)[2])"),
            std::string::npos);
  EXPECT_NE(text.find("const unsigned int warp_ = warp;"), std::string::npos);
  EXPECT_NE(text.find(" + column;"), std::string::npos);
  // wait = false: the wait is only in acc_wait.
  EXPECT_EQ(text.find("tcgen05.wait::ld"), text.rfind("tcgen05.wait::ld"));
  for (const char* absent : {"__global__", "extern \"C\""})
    EXPECT_EQ(text.find(absent), std::string::npos) << absent;
  for (const char* lifecycle :
       {"void alloc(unsigned int* smem_result, unsigned int columns)",
        "void dealloc(unsigned int tmem_base, unsigned int columns)", "void fence_before_sync()",
        "void fence_after_sync()", "tcgen05.relinquish_alloc_permit"})
    EXPECT_NE(text.find(lifecycle), std::string::npos) << lifecycle;

  options.language = tmem::Language::kPtx;
  auto ptx = tmem::device_function(spec, options);
  ASSERT_TRUE(ptx.ok()) << ptx.error().full_text();
  EXPECT_EQ(ptx->signature,
            ".visible .func (.param .align 4 .b8 regs[256]) acc(.param .b32 tmem_base, .param "
            ".b32 warp, .param .b32 column)");
  for (const char* func :
       {".visible .func acc_wait()", ") acc_coord(", ".visible .func tmemjit_alloc(",
        ".visible .func tmemjit_dealloc(", ".visible .func tmemjit_fence_before_sync()",
        ".visible .func tmemjit_fence_after_sync()"})
    EXPECT_NE(ptx->source.find(func), std::string::npos) << func << "\n" << ptx->source;
  EXPECT_EQ(ptx->source.find(".entry"), std::string::npos);
}

TEST(DeviceFunction, NamesAreCIdentifiers) {
  const tmem::TransferSpec spec = tmemjit_test::seed_layout_b(true).make();
  const struct {
    const char* name;
    const char* says;
  } bad[] = {{"", "is empty"},
             {"1acc", "starts with a digit"},
             {"acc-load", "contains '-'"},
             {"acc load", "contains ' '"},
             {"int", "C++ keyword"},
             {"threadIdx", "CUDA built-in"},
             {"__acc", "reserves"},
             {"tmemjit_acc", "libtmemjit reserves"}};
  for (const auto& [name, says] : bad)
    for (tmem::Language language : {tmem::Language::kCuda, tmem::Language::kPtx}) {
      auto function = tmem::device_function(spec, named(name, language));
      ASSERT_FALSE(function.ok()) << name;
      EXPECT_EQ(function.error().code(), tmem::ErrorCode::kUsage);
      EXPECT_EQ(function.error().message().rfind("transfer name '" + std::string(name) + "' ", 0),
                0u)
          << function.error().message();
      EXPECT_NE(function.error().message().find(says), std::string::npos)
          << function.error().message();
    }
  EXPECT_TRUE(tmem::device_function(spec, named("_acc2", tmem::Language::kCuda)).ok());
}

TEST(DeviceFunction, RuleErrorsComeBackAsTheyAre) {
  SpecText text = tmemjit_test::seed_layout_b(true);
  text.op = "tcgen05.st.sync.aligned.32x32b.x32.b32";  // the views need x64
  const tmem::TransferSpec spec = text.make();
  auto function = tmem::device_function(spec, named("acc", tmem::Language::kCuda));
  ASSERT_FALSE(function.ok());
  EXPECT_EQ(function.error().code(), tmem::check(spec).error().code());
  EXPECT_EQ(function.error().message(), tmem::check(spec).error().message());
}

TEST(DeviceFunction, PtxFormIsNotEmulated) {
  auto function = tmem::device_function(tmemjit_test::seed_layout_b(true).make(),
                                        named("acc", tmem::Language::kPtx), tmem::Target::kSm90);
  ASSERT_FALSE(function.ok());
  EXPECT_EQ(function.error().code(), tmem::ErrorCode::kUsage);
}

// Two device functions pasted into one file (the lifecycle block is guarded) and a kernel of the
// user's that calls them, compiled by NVRTC as a user would: the plan's LDTM/STTM, no local
// memory.
TEST(DeviceFunctionCompile, TwoTransfersInOneCudaFile) {
  const std::string store =
      source_of(tmemjit_test::seed_layout_b(true), named("acc_store", tmem::Language::kCuda));
  const std::string load = source_of(tmemjit_test::seed_layout_b(false),
                                     named("acc_load", tmem::Language::kCuda, false));
  const std::string kernel = store + load + R"(
extern "C" __global__ void __launch_bounds__(128) roundtrip(const float* in, float* out) {
  __shared__ unsigned int base_shared;
  if (threadIdx.x / 32 == 0) tmemjit::alloc(&base_shared, 128);
  tmemjit::fence_before_sync();
  __syncthreads();
  tmemjit::fence_after_sync();
  float regs[acc_store_regs];
  for (int s = 0; s < acc_store_regs; ++s) regs[s] = in[threadIdx.x * acc_store_regs + s];
  acc_store(base_shared, regs);
  float back[acc_load_regs];
  acc_load(base_shared, back);
  acc_load_wait();
  for (int s = 0; s < acc_load_regs; ++s) {
    int index[2];
    acc_load_coord(threadIdx.x, s, index);
    out[index[0] * 128 + index[1]] = back[s];
  }
  tmemjit::fence_before_sync();
  __syncthreads();
  tmemjit::fence_after_sync();
  if (threadIdx.x / 32 == 0) tmemjit::dealloc(base_shared, 128);
}
)";
  tmem::CompileOptions options;
  auto module = tmem::compile_cuda(kernel, "roundtrip", options);
  ASSERT_TRUE(module.ok()) << module.error().full_text();
  const auto tool = tmem::sass::find_disassembler();
  if (!tool) GTEST_SKIP() << "compiled; SASS not checked: " << tmem::sass::search_description();
  const tmem::sass::Listing listing(tmem::sass::disassemble(*tool, module->cubin).value());
  EXPECT_EQ(listing.count("STTM"), 1);
  EXPECT_EQ(listing.count("LDTM"), 1);
  EXPECT_FALSE(listing.uses_local_memory());
}

}  // namespace
