(** arbor from OCaml: a context in the shape of Octez's [Context] signature, over arbor's C
    interface. Calls are synchronous (no Lwt); values are [bytes]; failures raise {!Error}. *)

exception Error of string * string
(** [Error (status, message)]: arbor's status name (["unknown commit"], ["bad path"], ...) and
    the message naming the problem. *)

type key = string list
(** A path: non-empty steps, outermost first. *)

type value = bytes

(** 32-byte context hashes, shown as Octez shows them (["Co…"]). *)
module Hash : sig
  type t = private string

  val of_raw : string -> t
  (** The 32 raw bytes. Raises [Invalid_argument] for another length. *)

  val to_raw : t -> string
  val to_b58check : t -> string
  val of_string : string -> t
  (** Either spelling: ["Co…"] base58check or 64 hex digits. *)

  val equal : t -> t -> bool
end

type index
(** An open store (Octez [Context.index]). *)

type tree
(** An immutable tree (Octez [Context.tree]). *)

type t
(** A context: a tree and the commit it was checked out from (Octez [Context.t]). *)

type depth = [ `Eq of int | `Le of int | `Lt of int | `Ge of int | `Gt of int ]

val init : ?readonly:bool -> ?cache_bytes:int -> ?sync_interval_ms:int -> string -> index
(** Opens (creating it if needed, unless [readonly]) the store in a directory. Every commit is
    synced unless [sync_interval_ms] is given. *)

val close : index -> unit
(** Syncs and closes; trees already obtained stay readable. Closing twice does nothing. *)

val sync : index -> int
(** For a read-only index beside a writer: picks up the commits written since it was opened or
    last synced, and returns how many (Octez [Context.sync]). *)

val empty : index -> t
(** The empty context of the store, with no parent. *)

val checkout : index -> Hash.t -> t option
(** The context of a commit, [None] if the store does not hold it. *)

val checkout_exn : index -> Hash.t -> t
val exists : index -> Hash.t -> bool

val commit : time:int64 -> ?author:string -> ?message:string -> t -> Hash.t
(** Commits the context with its parent (the commit it was checked out from, if any); the
    author defaults to ["Tezos"], the message to [""]. *)

val hash : time:int64 -> ?author:string -> ?message:string -> t -> Hash.t
(** The hash [commit] would return, without writing. *)

val commit_info : index -> Hash.t -> Hash.t * Hash.t list * int64 * string * string
(** Tree hash, parents, date, author and message of a commit. *)

val set_head : index -> string -> Hash.t -> unit
val head : index -> string -> Hash.t option

val gc : index -> Hash.t -> int
(** Keeps the given commit and those after it; returns how many commits were dropped. *)

val export_snapshot : index -> Hash.t -> string -> unit
val import_snapshot : index -> string -> Hash.t

(** {2 Reads and writes on a context, as Octez's [Context]} *)

val mem : t -> key -> bool
val mem_tree : t -> key -> bool
val find : t -> key -> value option
val find_tree : t -> key -> tree option
val list : t -> ?offset:int -> ?length:int -> key -> (string * tree) list
val length : t -> key -> int
val add : t -> key -> value -> t
val add_tree : t -> key -> tree -> t
val remove : t -> key -> t

val fold :
  ?depth:depth ->
  t ->
  key ->
  order:[ `Sorted | `Undefined ] ->
  init:'a ->
  f:(key -> tree -> 'a -> 'a) ->
  'a

val get_tree : t -> tree
val set_tree : t -> tree -> t

(** Trees, as Octez's [Context.Tree]. *)
module Tree : sig
  val empty : t -> tree

  val empty_detached : unit -> tree
  (** The empty tree tied to no store (Tezos inode shape); it can be committed to any store. *)

  val is_empty : tree -> bool
  val kind : tree -> [ `Value | `Tree ]
  val to_value : tree -> value option
  val of_value : t -> value -> tree
  val hash : tree -> Hash.t
  val equal : tree -> tree -> bool
  val mem : tree -> key -> bool
  val mem_tree : tree -> key -> bool
  val find : tree -> key -> value option
  val find_tree : tree -> key -> tree option
  val list : tree -> ?offset:int -> ?length:int -> key -> (string * tree) list
  val length : tree -> key -> int
  val add : tree -> key -> value -> tree
  val add_tree : tree -> key -> tree -> tree
  val remove : tree -> key -> tree

  val fold :
    ?depth:depth ->
    tree ->
    key ->
    order:[ `Sorted | `Undefined ] ->
    init:'a ->
    f:(key -> tree -> 'a -> 'a) ->
    'a
end
