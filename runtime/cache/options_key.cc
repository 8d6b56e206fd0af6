// How CompileOptions enter a cache key (options_key.h).
#include "runtime/cache/options_key.h"

#include <string_view>
#include <type_traits>

#include "tmem/target.h"

namespace tmem {

void key_options(KeyBuilder& key, const CompileOptions& options) {
  for_each_keyed_field(options, [&key](std::string_view name, const auto& field) {
    using Field = std::decay_t<decltype(field)>;
    if constexpr (std::is_same_v<Field, std::vector<std::string>>) {
      key.integer(name, static_cast<int64_t>(field.size()));
      for (const std::string& element : field) key.str(name, element);
    } else if constexpr (std::is_same_v<Field, bool> || std::is_same_v<Field, int>) {
      key.integer(name, field);
    } else {
      key.str(name, to_string(field));  // the enums, by their names
    }
  });
}

}  // namespace tmem
