exception Error of string * string

let () =
  Callback.register_exception "arbor.error" (Error ("", ""));
  Printexc.register_printer (function
    | Error (status, message) -> Some (Printf.sprintf "Arbor.Error (%s: %s)" status message)
    | _ -> None)

type key = string list
type value = bytes

module Hash = struct
  type t = string

  external to_b58 : string -> string = "arbor_ml_hash_to_b58"
  external parse : string -> string = "arbor_ml_hash_parse"

  let of_raw s = if String.length s = 32 then s else invalid_arg "Arbor.Hash.of_raw: a hash is 32 bytes"
  let to_raw s = s
  let to_b58check = to_b58
  let of_string = parse
  let equal = String.equal
end

type index
type tree
type t = { index : index; parents : Hash.t list; tree : tree }
type depth = [ `Eq of int | `Le of int | `Lt of int | `Ge of int | `Gt of int ]

external open_store : string -> bool -> int -> int -> index = "arbor_ml_open"
external close : index -> unit = "arbor_ml_close"
external sync : index -> int = "arbor_ml_refresh"
external store_empty : index -> tree = "arbor_ml_store_empty"
external checkout_tree : index -> string -> tree option = "arbor_ml_checkout"
external exists : index -> Hash.t -> bool = "arbor_ml_exists"

external commit_tree : index -> tree -> string list -> int64 -> string -> string -> string
  = "arbor_ml_commit_bytecode" "arbor_ml_commit"

external commit_hash : tree -> string list -> int64 -> string -> string -> string = "arbor_ml_commit_hash"

external commit_info : index -> Hash.t -> Hash.t * Hash.t list * int64 * string * string
  = "arbor_ml_commit_info"

external set_head : index -> string -> Hash.t -> unit = "arbor_ml_set_head"
external head : index -> string -> Hash.t option = "arbor_ml_head"
external gc : index -> Hash.t -> int = "arbor_ml_gc"
external export_snapshot : index -> Hash.t -> string -> unit = "arbor_ml_export"
external import_snapshot : index -> string -> Hash.t = "arbor_ml_import"

let init ?(readonly = false) ?(cache_bytes = 0) ?(sync_interval_ms = -1) dir =
  open_store dir readonly cache_bytes sync_interval_ms

let empty index = { index; parents = []; tree = store_empty index }

let checkout index h =
  Option.map (fun tree -> { index; parents = [ h ]; tree }) (checkout_tree index h)

let checkout_exn index h =
  match checkout index h with
  | Some c -> c
  | None -> raise (Error ("unknown commit", "checkout: no commit " ^ Hash.to_b58check h))

let commit ~time ?(author = "Tezos") ?(message = "") c = commit_tree c.index c.tree c.parents time author message
let hash ~time ?(author = "Tezos") ?(message = "") c = commit_hash c.tree c.parents time author message

module Raw = struct
  external empty : unit -> tree = "arbor_ml_tree_empty"
  external of_value : tree -> bytes -> tree = "arbor_ml_tree_of_value"
  external hash : tree -> string = "arbor_ml_tree_hash"
  external is_value : tree -> bool = "arbor_ml_tree_is_value"
  external is_empty : tree -> bool = "arbor_ml_tree_is_empty"
  external to_value : tree -> bytes option = "arbor_ml_tree_to_value"
  external find : tree -> key -> bytes option = "arbor_ml_find"
  external mem : tree -> key -> bool = "arbor_ml_mem"
  external mem_tree : tree -> key -> bool = "arbor_ml_mem_tree"
  external find_tree : tree -> key -> tree option = "arbor_ml_find_tree"
  external length : tree -> key -> int = "arbor_ml_length"
  external add : tree -> key -> bytes -> tree = "arbor_ml_add"
  external add_tree : tree -> key -> tree -> tree = "arbor_ml_add_tree"
  external remove : tree -> key -> tree = "arbor_ml_remove"
  external list : tree -> key -> int -> int -> (string * tree) list = "arbor_ml_list"

  external fold : tree -> key -> int -> int -> bool -> 'a -> (key -> tree -> 'a -> 'a) -> 'a
    = "arbor_ml_fold_bytecode" "arbor_ml_fold"
end

module Tree = struct
  let empty (_ : t) = Raw.empty ()
  let empty_detached () = Raw.empty ()
  let is_empty = Raw.is_empty
  let kind t = if Raw.is_value t then `Value else `Tree
  let to_value = Raw.to_value
  let of_value c v = Raw.of_value c.tree v
  let hash = Raw.hash
  let equal a b = String.equal (hash a) (hash b)
  let mem = Raw.mem
  let mem_tree = Raw.mem_tree
  let find = Raw.find
  let find_tree = Raw.find_tree

  let list t ?(offset = 0) ?(length = -1) key =
    if offset < 0 then invalid_arg "Arbor.Tree.list: negative offset";
    Raw.list t key offset length

  let length = Raw.length
  let add = Raw.add
  let add_tree = Raw.add_tree
  let remove = Raw.remove

  let fold ?depth t key ~order ~init ~f =
    let kind, bound =
      match depth with
      | None -> (0, 0)
      | Some (`Eq n) -> (1, n)
      | Some (`Le n) -> (2, n)
      | Some (`Lt n) -> (3, n)
      | Some (`Ge n) -> (4, n)
      | Some (`Gt n) -> (5, n)
    in
    if bound < 0 then invalid_arg "Arbor.Tree.fold: negative depth";
    Raw.fold t key kind bound (order = `Sorted) init f
end

let get_tree c = c.tree
let set_tree c tree = { c with tree }
let mem c = Tree.mem c.tree
let mem_tree c = Tree.mem_tree c.tree
let find c = Tree.find c.tree
let find_tree c = Tree.find_tree c.tree
let list c = Tree.list c.tree
let length c = Tree.length c.tree
let add c k v = { c with tree = Tree.add c.tree k v }
let add_tree c k t = { c with tree = Tree.add_tree c.tree k t }
let remove c k = { c with tree = Tree.remove c.tree k }
let fold ?depth c = Tree.fold ?depth c.tree
