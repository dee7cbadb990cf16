package smarth.nnbench;

import java.util.HashMap;
import java.util.Map;

/** {@code --name value} pairs; nothing fancier is needed here. */
final class Flags {
  private final Map<String, String> values = new HashMap<>();

  static Flags parse(String[] args) {
    Flags f = new Flags();
    for (int i = 0; i < args.length; i += 2) {
      if (!args[i].startsWith("--") || i + 1 >= args.length) {
        throw new IllegalArgumentException("expected --name value, got " + args[i]);
      }
      f.values.put(args[i].substring(2), args[i + 1]);
    }
    return f;
  }

  String get(String name, String def) {
    return values.getOrDefault(name, def);
  }

  String require(String name) {
    String v = values.get(name);
    if (v == null) {
      throw new IllegalArgumentException("--" + name + " is required");
    }
    return v;
  }

  int getInt(String name, int def) {
    return Integer.parseInt(get(name, Integer.toString(def)));
  }
}
