"""Type stubs of the native module (crates/toolfix-py/src)."""

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, TypedDict, overload

__version__: str

JSONValue = dict[str, Any] | list[Any] | str | int | float | bool | None

class Fix(TypedDict):
    """A text fix in a `logging=True` log: kind, character span in the input, the text it covered."""

    kind: str
    span: tuple[int, int]
    text: str

class DuplicateKey(TypedDict):
    """A key given twice, in a `logging=True` log."""

    kind: Literal["duplicate_key"]
    pointer: str
    values: list[Any]

LogEntry = Fix | DuplicateKey

class RepairError(ValueError):
    """Text with no JSON that can be recovered without guessing (or, with `strict=True`, a
    repair strict mode refuses)."""

    kind: str
    msg: str
    pos: int | None
    lineno: int | None
    colno: int | None
    hint: str | None

@overload
def loads(text: str, *, strict: bool = False, logging: Literal[False] = False, max_input_bytes: int | None = None) -> JSONValue: ...
@overload
def loads(text: str, *, strict: bool = False, logging: Literal[True], max_input_bytes: int | None = None) -> tuple[JSONValue, list[LogEntry]]: ...
@overload
def repair_json(
    text: str,
    *,
    return_objects: Literal[False] = False,
    logging: Literal[False] = False,
    ensure_ascii: bool = True,
    indent: int | str | None = None,
    strict: bool = False,
    max_input_bytes: int | None = None,
) -> str: ...
@overload
def repair_json(
    text: str,
    *,
    return_objects: Literal[False] = False,
    logging: Literal[True],
    ensure_ascii: bool = True,
    indent: int | str | None = None,
    strict: bool = False,
    max_input_bytes: int | None = None,
) -> tuple[str, list[LogEntry]]: ...
@overload
def repair_json(
    text: str,
    *,
    return_objects: Literal[True],
    logging: bool = False,
    ensure_ascii: bool = True,
    indent: int | str | None = None,
    strict: bool = False,
    max_input_bytes: int | None = None,
) -> Any: ...
def fix_reply(
    content: str | None = None,
    reasoning_content: str | None = None,
    tool_calls: Sequence[Mapping[str, Any]] | None = None,
    finish_reason: str | None = None,
    history: Sequence[Mapping[str, Any]] | None = None,
) -> FixedReply: ...

class ToolSet:
    """Tool definitions, each schema compiled once; cheap to share between threads."""

    def __init__(self, tools: Iterable[Any], *, read_only: Iterable[str] | None = None) -> None: ...
    @classmethod
    def from_openai(cls, tools: Iterable[Any], *, read_only: Iterable[str] | None = None) -> ToolSet: ...
    @classmethod
    def from_anthropic(cls, tools: Iterable[Any], *, read_only: Iterable[str] | None = None) -> ToolSet: ...
    @classmethod
    def from_mcp(cls, tools: Iterable[Any], *, read_only: Iterable[str] | None = None) -> ToolSet: ...
    @classmethod
    def from_pydantic(cls, models: Iterable[type[Any]], *, read_only: Iterable[str] | None = None) -> ToolSet: ...
    @classmethod
    def from_schemas(cls, schemas: Mapping[str, Mapping[str, Any]], *, read_only: Iterable[str] | None = None) -> ToolSet: ...
    @property
    def names(self) -> list[str]: ...
    def is_read_only(self, name: str) -> bool: ...
    def with_read_only(self, name: str, read_only: bool = True) -> ToolSet: ...
    def __len__(self) -> int: ...
    def __contains__(self, name: str) -> bool: ...
    def repair_call(self, name: str, arguments: str | Mapping[str, Any], *, hit_token_limit: bool = False) -> CallOutcome: ...
    def fix_reply(
        self,
        content: str | None = None,
        reasoning_content: str | None = None,
        tool_calls: Sequence[Mapping[str, Any]] | None = None,
        finish_reason: str | None = None,
        history: Sequence[Mapping[str, Any]] | None = None,
    ) -> FixedReply: ...

class CallOutcome:
    """What became of one call: arguments the schema accepts, or a refusal."""

    @property
    def name(self) -> str: ...
    @property
    def ok(self) -> bool: ...
    @property
    def outcome(self) -> Literal["untouched", "repaired", "rejected"]: ...
    @property
    def arguments(self) -> dict[str, Any] | None: ...
    @property
    def arguments_json(self) -> str | None: ...
    @property
    def repairs(self) -> list[dict[str, Any]]: ...
    @property
    def text_fixes(self) -> list[dict[str, Any]]: ...
    @property
    def notes(self) -> list[str]: ...
    @property
    def message(self) -> str | None: ...
    @property
    def issues(self) -> list[dict[str, Any]]: ...
    def to_dict(self) -> dict[str, Any]: ...
    def __bool__(self) -> bool: ...

class FixedCall:
    """One call of a fixed reply."""

    @property
    def id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def written_name(self) -> str: ...
    @property
    def format(self) -> str: ...
    @property
    def channel(self) -> Literal["content", "reasoning", "tool_calls"]: ...
    @property
    def status(self) -> Literal["untouched", "repaired", "refused", "suppressed"]: ...
    @property
    def ok(self) -> bool: ...
    @property
    def arguments(self) -> dict[str, Any] | None: ...
    @property
    def arguments_json(self) -> str | None: ...
    @property
    def message(self) -> str | None: ...
    @property
    def suppressed(self) -> bool: ...
    @property
    def repairs(self) -> list[dict[str, Any]]: ...
    @property
    def text_fixes(self) -> list[dict[str, Any]]: ...
    @property
    def notes(self) -> list[str]: ...
    def to_dict(self) -> dict[str, Any]: ...

class FixedReply:
    """A fixed reply: the calls in order, and the prose and reasoning left."""

    @property
    def calls(self) -> list[FixedCall]: ...
    @property
    def content(self) -> str: ...
    @property
    def reasoning_content(self) -> str | None: ...
    @property
    def notes(self) -> list[dict[str, Any]]: ...
    @property
    def outcome(self) -> Literal["no_calls", "usable", "refused"]: ...
    @property
    def changed_calls(self) -> bool: ...
    def to_dict(self) -> dict[str, Any]: ...

class StreamEvent:
    """What a ReplyStream tells: prose, reasoning, a complete fixed call, or a note."""

    @property
    def kind(self) -> Literal["content", "reasoning", "content_was_reasoning", "call", "note"]: ...
    @property
    def text(self) -> str | None: ...
    @property
    def call(self) -> FixedCall | None: ...
    @property
    def note(self) -> dict[str, Any] | None: ...

class ReplyStream:
    """The streaming counterpart of `ToolSet.fix_reply`."""

    def __init__(self, tools: ToolSet | None = None, history: Sequence[Mapping[str, Any]] | None = None) -> None: ...
    def push_content(self, text: str) -> list[StreamEvent]: ...
    def push_reasoning(self, text: str) -> list[StreamEvent]: ...
    def push_tool_call(self, index: int, id: str | None = None, name: str | None = None, arguments: str | None = None) -> list[StreamEvent]: ...
    def finish(self, finish_reason: str | None = None) -> tuple[list[StreamEvent], FixedReply]: ...
