(* Operations per second of find, add and (O(1): the crossing alone) hash through the OCaml binding, on the tree that
   crates/arbor-ffi/examples/ffi_bench.rs describes. A benchmark, not a test. *)

let id i = Printf.sprintf "%08x" (Int32.to_int (Int32.mul (Int32.of_int i) 0x9E3779B1l) land 0xffffffff)
let key i = [ "data"; "contracts"; "index"; id i; "balance" ]

let value i =
  let b = Bytes.create 8 in
  Bytes.set_int64_le b 0 (Int64.of_int i);
  b

let report what ops secs =
  Printf.printf "%-28s %12.0f ops/s  %8.1f ns/op\n%!" what (float ops /. secs) (secs *. 1e9 /. float ops)

let () =
  let arg k d = if Array.length Sys.argv > k then int_of_string Sys.argv.(k) else d in
  let n = arg 1 100_000 and m = arg 2 200_000 in
  let base = ref (Arbor.Tree.empty_detached ()) in
  for i = 0 to n - 1 do
    base := Arbor.Tree.add !base (key i) (value i)
  done;
  let base = !base in
  Printf.printf "tree of %d values, hash %s\n" n (Arbor.Hash.to_b58check (Arbor.Tree.hash base));
  let start = Unix.gettimeofday () in
  for _ = 1 to m do
    ignore (Sys.opaque_identity (Arbor.Tree.hash base))
  done;
  report "OCaml hash (O(1))" m (Unix.gettimeofday () -. start);
  for pass = 0 to 1 do
    (* the first pass warms the tree up, untimed *)
    let start = Unix.gettimeofday () in
    for j = 0 to m - 1 do
      match Arbor.Tree.find base (key (j * 7919 mod n)) with Some _ -> () | None -> failwith "missing"
    done;
    if pass = 1 then report "OCaml find" m (Unix.gettimeofday () -. start)
  done;
  let start = Unix.gettimeofday () in
  let t = ref base in
  for j = 0 to m - 1 do
    t := Arbor.Tree.add !t (key (n + j)) (value (n + j))
  done;
  report "OCaml add" m (Unix.gettimeofday () -. start);
  Printf.printf "after adds: %s\n" (Arbor.Hash.to_b58check (Arbor.Tree.hash !t))
