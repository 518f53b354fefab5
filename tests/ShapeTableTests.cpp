// A task's shape is one row of data (common/engine/PlannedTask.h, ShapeRow): its plan, tile and
// boundary sizes. A variant whose shape has no row, or whose row has no plan, is refused when
// the task is made, not when a case first plans.
#include "TestSupport.h"

#include "engine/PlannedTask.h"
#include "tasks/CConvolutionTask.h"
#include "tasks/CReductionTask.h"
#include "tasks/CScanTask.h"
#include "tasks/Tasks.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace rsb::test {
namespace {

enum class TwoShapes { Plain, Tiled };

// A task of two shapes whose rows are what the test gives: the plain shape's plan alone, the
// tiled shape's plan, tile and boundary sizes, each recognisable by what it returns.
class RowsTask : public TableTask<TwoShapes> {
 public:
  using Shape = TwoShapes;
  using Rows = std::vector<ShapeRow<RowsTask, Shape>>;
  static std::vector<Variant> TwoVariants() {
    return {{"plain", "Plain", "Rows.cl", Shape::Plain, 64, 8, ""},
            {"tiled", "Tiled", "Rows.cl", Shape::Tiled, 64, 8, ""}};
  }
  static Rows AllRows() {
    return {{Shape::Plain, &RowsTask::PlainPlan},
            {Shape::Tiled, &RowsTask::TiledPlan, &RowsTask::TiledTile, &RowsTask::TiledSizes}};
  }
  explicit RowsTask(const Rows& rows = AllRows(), std::vector<Variant> table = TwoVariants())
      : TableTask(std::move(table), rows) {}
  std::string Name() const override { return "rows"; }

 protected:
  Expected Reference(const HostArray&, const ProblemSpec&) const override { return {}; }
  size_t OutputElements(const ProblemSpec&) const override { return 1; }

 private:
  LaunchPlan PlainPlan(const DeviceInfo&, const Variant& v, const ProblemSpec&) const {
    LaunchPlan plan;
    plan.options = "plain plan of " + v.name;
    return plan;
  }
  LaunchPlan TiledPlan(const DeviceInfo& device, const Variant& v, const ProblemSpec& spec) const {
    LaunchPlan plan;
    plan.options =
        "tiled plan of " + v.name + fmt::format(" {}", FittingTile(device, v, spec).bytes);
    return plan;
  }
  LocalTile TiledTile(const DeviceInfo& device, const Variant& v, const ProblemSpec& spec) const {
    return FixedTile(device, v.name, spec, 3 * spec.localSize);
  }
  std::vector<size_t> TiledSizes(const DeviceInfo&, const Variant&, const ProblemSpec& spec) const {
    return {spec.localSize, 7};
  }
};

ProblemSpec At(size_t localSize) {
  ProblemSpec spec;
  spec.n = 1000;
  spec.localSize = localSize;
  return spec;
}

// Plan, Tile and BoundarySizes are the variant's shape row's; a row without a tile or boundary
// sizes has none (no local memory, no sizes of its own).
TEST(Shapes, ARowsFunctionsAreItsVariantsPlanTileAndBoundarySizes) {
  const RowsTask task;
  const DeviceInfo device = FabricatedDevice(true, 48 << 10, 1024);
  EXPECT_EQ(task.Plan(device, "plain", At(64)).options, "plain plan of plain");
  EXPECT_EQ(task.Plan(device, "tiled", At(64)).options, "tiled plan of tiled 192");
  EXPECT_EQ(task.Tile(device, "plain", At(64)).bytes, 0u);
  EXPECT_EQ(task.Tile(device, "tiled", At(64)).bytes, 192u);
  EXPECT_EQ(task.BoundarySizes(device, "plain", At(64)), std::vector<size_t>{});
  EXPECT_EQ(task.BoundarySizes(device, "tiled", At(64)), (std::vector<size_t>{64, 7}));
  // The row's tile is the one the automatic local size fits and the plan checks.
  const DeviceInfo small = FabricatedDevice(true, 96, 1024);
  EXPECT_EQ(task.LocalSize("tiled", At(0), small), 32u);
  EXPECT_EQ(task.LocalSize("plain", At(0), small), 64u);
  EXPECT_THROW(task.Plan(small, "tiled", At(64)), VariantSkipped);
}

// A variant whose shape has no row, a row with no plan and two rows of one shape are refused
// when the task is made, with the variant or the shape named.
TEST(Shapes, ATableMissingARowOrAPlanIsRefusedWhenTheTaskIsMade) {
  const auto refusal = [](const RowsTask::Rows& rows) -> std::string {
    try {
      RowsTask task(rows);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "made";
  };
  RowsTask::Rows rows = RowsTask::AllRows();
  rows.pop_back();
  EXPECT_EQ(refusal(rows),
            "variant 'tiled': its shape, number 1, has no row in the task's table of shapes");
  rows = RowsTask::AllRows();
  rows[1].plan = nullptr;
  EXPECT_EQ(refusal(rows), "shape number 1: its row in the task's table of shapes has no plan");
  rows = RowsTask::AllRows();
  rows.push_back(rows[0]);
  EXPECT_EQ(refusal(rows), "shape number 0: two rows in the task's table of shapes");
  EXPECT_EQ(refusal(RowsTask::AllRows()), "made");
}

// The tasks' own tables: a variant of a shape the task has no row for (a new enum value with
// no row yet) is refused when the task is made.
TEST(Shapes, ATasksVariantOfAShapeWithNoRowIsRefused) {
  auto reduction = CReductionTask::DefaultTable();
  reduction.push_back({"new", "ReduceNew", "Reduction.cl", ReductionShape(99), 256, 16, ""});
  EXPECT_THROW(CReductionTask{reduction}, std::invalid_argument);
  auto scan = CScanTask::DefaultTable();
  scan.push_back({"new", "ScanNew", "Scan.cl", ScanShape(99), 256, 16, ""});
  EXPECT_THROW(CScanTask{scan}, std::invalid_argument);
  auto convolution = CConvolutionTask::DefaultTable();
  convolution.push_back({"new", "New", "Convolution.cl", ConvolutionShape(99), 256, 16, ""});
  EXPECT_THROW(CConvolutionTask{convolution}, std::invalid_argument);
}

// Every shape of every task has a row with a plan: each variant of every registered task plans
// (or is skipped for what the device lacks), on a GPU and on a CPU device.
TEST(Shapes, EveryVariantOfEveryRegisteredTaskPlansFromItsRow) {
  size_t plans = 0, variants = 0;
  for (const bool gpu : {true, false}) {
    const DeviceInfo device = FabricatedDevice(gpu, 48 << 10, 1024);
    for (const auto& task : MakeTasks())
      for (const auto& variant : task->Variants()) {
        ++variants;
        ProblemSpec spec = At(0);
        spec.type = task->Types().front();
        spec.op = task->Ops().front();
        spec.height = task->TakesShape(variant) ? 20 : 0;
        spec.localSize = task->LocalSize(variant, spec, device);
        const auto* planned = dynamic_cast<const PlannedTask*>(task.get());
        ASSERT_NE(planned, nullptr) << task->Name();
        try {
          planned->PlanFor(device, variant, spec);
          ++plans;
        } catch (const VariantSkipped&) {
        }
      }
  }
  EXPECT_EQ(plans, variants);  // the fabricated devices lack nothing
}

}  // namespace
}  // namespace rsb::test
