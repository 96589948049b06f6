# node-gyp build of the addon. The build `npm ci` runs is cmake-js (native/build.sh); this one
# exists for tools that only know node-gyp and must stay equivalent: same source list
# (native/sources.txt), C++20, no C++ exceptions, Node-API 8, unthrowable exceptions swallowed.
# See docs/native.md.
{
  'targets': [
    {
      'target_name': 'warehouse_native',
      'sources': [ '<!@(awk \'/^[^#]/ { print "native/" $1 }\' native/sources.txt)' ],
      # node-addon-api's include dir, NODE_ADDON_API_DISABLE_CPP_EXCEPTIONS and -fno-exceptions.
      'dependencies': [ "<!(node -p \"require('node-addon-api').targets\"):node_addon_api" ],
      # An error raised while the environment terminates is dropped, not a fatal error of the
      # process (docs/native.md, "Teardown"); as in native/CMakeLists.txt.
      'defines': [ 'NAPI_VERSION=8', 'NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS' ],
      # The bot link codec (firmware-protocol/c/wh_proto.c, in sources.txt) is C99.
      'include_dirs': [ 'firmware-protocol/c' ],
      'cflags_c': [ '-std=c99', '-Wall', '-Wextra', '-fvisibility=hidden' ],
      # node-gyp defaults to gnu++17 without RTTI; match CMake's C++20 with RTTI.
      'cflags_cc!': [ '-std=gnu++17', '-fno-rtti' ],
      'cflags_cc': [ '-std=c++20', '-Wall', '-Wextra', '-fvisibility=hidden' ],
    },
    {
      # The TypeScript wrapper loads native/build/Release/, where cmake-js puts its output.
      'target_name': 'copy_to_native_build',
      'type': 'none',
      'dependencies': [ 'warehouse_native' ],
      'copies': [ {
        'destination': 'native/build/Release',
        'files': [ '<(PRODUCT_DIR)/warehouse_native.node' ],
      } ],
    },
  ],
}
