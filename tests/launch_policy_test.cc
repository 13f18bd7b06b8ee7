// The launch policy's tables (poly/launch_policy.h): every family's table names every
// field once, with a record that is either "default, not measured" or a file under
// docs/results/ that exists; a compute capability finds its family's table, and any
// other the default; a Target reads the policy of its own capability.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>

#include "poly/binding.h"
#include "poly/launch_policy.h"

namespace polyred {
namespace {

TEST(LaunchPolicy, EveryTableNamesEveryFieldOnceWithItsRecord) {
  const std::span<const LaunchPolicyField> fields = launchPolicyFields();
  ASSERT_EQ(fields.size() * sizeof(int), sizeof(LaunchPolicy)) << "a LaunchPolicy field has no entry in kFields";
  std::set<std::string> names;
  for (const LaunchPolicyField& f : fields) {
    EXPECT_TRUE(names.insert(f.name).second) << f.name << " listed twice";
    EXPECT_GT(std::string(f.meaning).size(), 10u) << f.name << " has no meaning";
  }
  ASSERT_GE(launchPolicyTables().size(), 3u);
  for (const LaunchPolicyTable& table : launchPolicyTables()) {
    EXPECT_EQ(table.rows.size(), fields.size()) << table.family;
    for (const LaunchPolicyField& f : fields) {
      int named = 0;
      for (const LaunchPolicyValue& row : table.rows) {
        if (row.field != f.field) continue;
        ++named;
        EXPECT_GT(row.value, 0) << table.family << " " << f.name;
        const std::string record = row.record;
        const size_t file = record.find("docs/results/");
        if (file == std::string::npos) {
          EXPECT_EQ(record.rfind("default, not measured", 0), 0u) << table.family << " " << f.name << ": " << record;
        } else {
          EXPECT_TRUE(std::filesystem::exists(std::string(POLYRED_SOURCE_DIR) + "/" + record.substr(file)))
              << table.family << " " << f.name << ": " << record;
        }
      }
      EXPECT_EQ(named, 1) << table.family << " names " << f.name << " " << named << " times";
    }
  }
}

TEST(LaunchPolicy, ComputeCapabilityFindsItsFamilyElseTheDefault) {
  EXPECT_STREQ(launchPolicyTableFor(9, 0).family, "sm_90");
  EXPECT_STREQ(launchPolicyTableFor(8, 0).family, "sm_80");
  EXPECT_STREQ(launchPolicyTableFor(12, 0).family, "default");
  EXPECT_STREQ(launchPolicyTableFor(8, 6).family, "default");
  EXPECT_STREQ(launchPolicyTableFor(7, 0).family, "default");
  EXPECT_STREQ(launchPolicyTables().back().family, "default");
  EXPECT_EQ(&launchPolicyFor(12, 0), &launchPolicyFor(7, 5));
  EXPECT_NE(&launchPolicyFor(12, 0), &launchPolicyFor(9, 0));
}

TEST(LaunchPolicy, PolicyHoldsItsTablesValues) {
  for (const auto& [major, minor] : {std::pair{9, 0}, {8, 0}, {12, 0}}) {
    const LaunchPolicy& policy = launchPolicyFor(major, minor);
    for (const LaunchPolicyValue& row : launchPolicyTableFor(major, minor).rows)
      EXPECT_EQ(policy.*row.field, row.value) << major << "." << minor;
  }
}

TEST(LaunchPolicy, TargetReadsThePolicyOfItsComputeCapability) {
  Target t;  // sm_90 unless told
  EXPECT_EQ(&t.launchPolicy(), &launchPolicyFor(9, 0));
  t.ccMajor = 12;
  EXPECT_EQ(&t.launchPolicy(), &launchPolicyFor(12, 0));
  t.ccMajor = 8;
  EXPECT_EQ(&t.launchPolicy(), &launchPolicyFor(8, 0));
}

}  // namespace
}  // namespace polyred
