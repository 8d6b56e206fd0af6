// CompileOptions in a cache key (runtime/cache/options_key.h): every field the key lists changes
// the key when it changes, found by walking that same list (not a list written here); the fields
// it leaves out (keep_dir, specialization) do not; lists are keyed element by element.
#include "runtime/cache/options_key.h"

#include <gtest/gtest.h>

#include <string>
#include <type_traits>
#include <vector>

namespace tmem {
namespace {

Key128 key_of(const CompileOptions& options) {
  KeyBuilder key;
  key_options(key, options);
  return key.finish();
}

// Another value of any field type: the next enumerator (target and backend have several), the
// other bool, another int, one more list element.
template <class Field>
void change(Field& field) {
  if constexpr (std::is_same_v<Field, std::vector<std::string>>) {
    field.push_back("-DCHANGED");
  } else if constexpr (std::is_same_v<Field, bool>) {
    field = !field;
  } else if constexpr (std::is_same_v<Field, int>) {
    field += 1;
  } else {
    field = static_cast<Field>(static_cast<int>(field) + 1);
  }
}

TEST(OptionsKey, EveryKeyedFieldChangesTheKey) {
  const CompileOptions base;
  const Key128 base_key = key_of(base);
  int fields = 0;
  CompileOptions names;
  for_each_keyed_field(names, [&](std::string_view name, auto& /*field*/) {
    ++fields;
    CompileOptions changed = base;
    int seen = 0;
    for_each_keyed_field(changed, [&](std::string_view other, auto& field) {
      if (other == name && seen++ == 0) change(field);
    });
    EXPECT_NE(changed, base) << name << ": the change reached the field";
    EXPECT_NE(key_of(changed), base_key) << name << " changed and the key did not";
  });
  EXPECT_EQ(fields, 11) << "the keyed fields (a new one: add it to this count too)";
}

TEST(OptionsKey, TheFieldsLeftOutDoNotChangeTheKey) {
  CompileOptions changed;
  changed.keep_dir = "/tmp/kept";
  changed.specialization = Specialization::kLazy;
  EXPECT_EQ(key_of(changed), key_of(CompileOptions{}));
}

TEST(OptionsKey, ListsAreKeyedElementByElement) {
  CompileOptions one, two;
  one.nvrtc_options = {"-DA -DB"};
  two.nvrtc_options = {"-DA", "-DB"};
  EXPECT_NE(key_of(one), key_of(two));
  CompileOptions moved;  // the same text in another list
  moved.ptx_options = {"-DA -DB"};
  EXPECT_NE(key_of(one), key_of(moved));
}

}  // namespace
}  // namespace tmem
