"""The public names of the standard modules a .tg program may import (see
tests/make_stdlib_names.py). Generated from CPython 3.11.7; do not edit.
"""

NAMES = {
    "sys": (
        "abiflags addaudithook api_version argv audit base_exec_prefix base_prefix "
        "breakpointhook builtin_module_names byteorder call_tracing copyright displayhook "
        "dont_write_bytecode exc_info excepthook exception exec_prefix executable exit flags "
        "float_info float_repr_style get_asyncgen_hooks get_coroutine_origin_tracking_depth "
        "get_int_max_str_digits getallocatedblocks getdefaultencoding getdlopenflags "
        "getfilesystemencodeerrors getfilesystemencoding getprofile getrecursionlimit "
        "getrefcount getsizeof getswitchinterval gettrace hash_info hexversion implementation "
        "int_info intern is_finalizing maxsize maxunicode meta_path modules orig_argv path "
        "path_hooks path_importer_cache platform platlibdir prefix pycache_prefix "
        "set_asyncgen_hooks set_coroutine_origin_tracking_depth set_int_max_str_digits "
        "setdlopenflags setprofile setrecursionlimit setswitchinterval settrace stderr stdin "
        "stdlib_module_names stdout thread_info unraisablehook version version_info warnoptions "
    ),
    "time": (
        "CLOCK_BOOTTIME CLOCK_MONOTONIC CLOCK_MONOTONIC_RAW CLOCK_PROCESS_CPUTIME_ID "
        "CLOCK_REALTIME CLOCK_TAI CLOCK_THREAD_CPUTIME_ID altzone asctime clock_getres "
        "clock_gettime clock_gettime_ns clock_settime clock_settime_ns ctime daylight "
        "get_clock_info gmtime localtime mktime monotonic monotonic_ns perf_counter "
        "perf_counter_ns process_time process_time_ns pthread_getcpuclockid sleep strftime "
        "strptime struct_time thread_time thread_time_ns time time_ns timezone tzname tzset "
    ),
    "itertools": (
        "accumulate chain combinations combinations_with_replacement compress count cycle "
        "dropwhile filterfalse groupby islice pairwise permutations product repeat starmap "
        "takewhile tee zip_longest "
    ),
    "functools": (
        "GenericAlias RLock WRAPPER_ASSIGNMENTS WRAPPER_UPDATES cache cached_property cmp_to_key "
        "get_cache_token lru_cache namedtuple partial partialmethod recursive_repr reduce "
        "singledispatch singledispatchmethod total_ordering update_wrapper wraps "
    ),
    "warnings": (
        "WarningMessage catch_warnings defaultaction filters filterwarnings formatwarning "
        "onceregistry resetwarnings showwarning simplefilter sys warn warn_explicit "
    ),
    "typing": (
        "ABCMeta AbstractSet Annotated Any AnyStr AsyncContextManager AsyncGenerator "
        "AsyncIterable AsyncIterator Awaitable BinaryIO ByteString CT_co Callable ChainMap "
        "ClassVar Collection Concatenate Container ContextManager Coroutine Counter DefaultDict "
        "Deque Dict EXCLUDED_ATTRIBUTES Final ForwardRef FrozenSet Generator Generic "
        "GenericAlias Hashable IO ItemsView Iterable Iterator KT KeysView List Literal "
        "LiteralString Mapping MappingView Match MethodDescriptorType MethodWrapperType "
        "MutableMapping MutableSequence MutableSet NamedTuple NamedTupleMeta Never NewType "
        "NoReturn NotRequired Optional OrderedDict ParamSpec ParamSpecArgs ParamSpecKwargs "
        "Pattern Protocol Required Reversible Self Sequence Set Sized SupportsAbs SupportsBytes "
        "SupportsComplex SupportsFloat SupportsIndex SupportsInt SupportsRound T TYPE_CHECKING "
        "T_co T_contra Text TextIO Tuple Type TypeAlias TypeGuard TypeVar TypeVarTuple TypedDict "
        "Union Unpack VT VT_co V_co ValuesView WrapperDescriptorType abstractmethod assert_never "
        "assert_type cast clear_overloads collections contextlib dataclass_transform defaultdict "
        "final functools get_args get_origin get_overloads get_type_hints io is_typeddict "
        "no_type_check no_type_check_decorator operator overload re reveal_type "
        "runtime_checkable stdlib_re sys types warnings "
    ),
    "re": (
        "A ASCII DEBUG DOTALL I IGNORECASE L LOCALE M MULTILINE Match NOFLAG Pattern RegexFlag S "
        "Scanner T TEMPLATE U UNICODE VERBOSE X compile copyreg enum error escape findall "
        "finditer fullmatch functools match purge search split sub subn template "
    ),
    "copy": (
        "Error copy deepcopy dispatch_table error "
    ),
    "string": (
        "Formatter Template ascii_letters ascii_lowercase ascii_uppercase capwords digits "
        "hexdigits octdigits printable punctuation whitespace "
    ),
}
