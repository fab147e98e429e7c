(* Tests of the OCaml binding: the published Tezos context hashes computed from OCaml, the
   Octez-shaped API, errors as exceptions, and the replay of a trace written by the Rust API
   with every result checked. *)

let fail fmt = Printf.ksprintf failwith fmt
let check what cond = if not cond then fail "check failed: %s" what
let b = Bytes.of_string

let temp_dir () =
  let d = Filename.concat (Filename.get_temp_dir_name ()) (Printf.sprintf "arbor-ml-%d-%d" (Unix.getpid ()) (Random.bits ())) in
  Unix.mkdir d 0o700;
  d

let rec remove_dir d =
  Array.iter
    (fun e ->
      let p = Filename.concat d e in
      if Sys.is_directory p then remove_dir p else Sys.remove p)
    (Sys.readdir d);
  Unix.rmdir d

let hex_decode s =
  let v c = match c with '0' .. '9' -> Char.code c - 48 | 'a' .. 'f' -> Char.code c - 87 | _ -> fail "hex %C" c in
  String.init (String.length s / 2) (fun i -> Char.chr ((v s.[2 * i] lsl 4) lor v s.[(2 * i) + 1]))

let expect_b58 what h published =
  let got = Arbor.Hash.to_b58check h in
  if got <> published then fail "%s: got %s, published %s" what got published

(* The 32 bytes of ProtoDemoNoopsDemoNoopsDemoNoopsDemoNoopsDemo6XBoYp. *)
let proto = hex_decode "0bcd7db2d718ba94e85bd262681049852e1f58512aa552124330d657845c73b7"

let vectors () =
  let dir = temp_dir () in
  let index = Arbor.init dir in
  let ctx = Arbor.empty index in
  let v = Arbor.Tree.of_value ctx (b "0000000000") in
  expect_b58 "value" (Arbor.Tree.hash v) "CoWHVKM5r2eiHQxhicqakkr5FwJfabahGBwCCWzRPCNPs79CoZty";
  let two = Arbor.Tree.(add (add (empty ctx) [ "00" ] (b "0000000000")) [ "01" ] (b "0000000000")) in
  expect_b58 "two entries" (Arbor.Tree.hash two) "CoVeCU4o3dqmfdwqt2vh8LDz9X6qGbTUyLhgVvFReyzAvTf92AKx";
  let g = Arbor.add (Arbor.add ctx [ "protocol" ] (b proto)) [ "test_chain" ] (b "\000") in
  let genesis_hash = Arbor.hash ~time:0L ~message:"Genesis" g in
  let genesis = Arbor.commit ~time:0L ~message:"Genesis" g in
  expect_b58 "genesis" genesis "CoVea41f9dPhkymYEfPsXV5FmyzDb91iz1Grk6zasb31zv9nEZjN";
  check "hash = commit" (Arbor.Hash.equal genesis genesis_hash);
  let c = Arbor.checkout_exn index genesis in
  let c = Arbor.add c [ "data"; "a"; "aaaaaaa" ] (b "foo1") in
  let c = Arbor.add c [ "data"; "a"; "aaaaaaaa" ] (b "foo2") in
  let c = List.fold_left (fun c n -> Arbor.add c [ "data"; String.make n 'a' ] (b "foo2")) c [ 16; 32; 64; 127 ] in
  let c1 = Arbor.commit ~time:0L c in
  expect_b58 "test_context commit" c1 "CoWJsL2ehZ39seTr8inBCJb5tVjW8KGNweJ5cvuVq51mAASrRmim";
  let c2 = Arbor.commit ~time:0L (Arbor.add c [ "data"; String.make 255 'a' ] (b "foo2")) in
  expect_b58 "255-byte step" c2 "CoVexcEHMXmSA2k42aNc5MCDtVJFRs3CC6vcQWYwFoj7EFsBPw1c";
  let tree, parents, date, author, _ = Arbor.commit_info index c1 in
  check "commit info" (Arbor.Hash.equal tree (Arbor.Tree.hash (Arbor.get_tree c)) && parents = [ genesis ] && date = 0L && author = "Tezos");
  Arbor.close index;
  remove_dir dir

let api () =
  let dir = temp_dir () in
  let index = Arbor.init ~sync_interval_ms:1000 dir in
  let c = Arbor.empty index in
  let c = Arbor.add c [ "a"; "x" ] (b "1") in
  let c = Arbor.add c [ "a"; "y" ] (b "2") in
  let c = Arbor.add c [ "b" ] (b "3") in
  check "find" (Arbor.find c [ "a"; "y" ] = Some (b "2"));
  check "find none" (Arbor.find c [ "a"; "z" ] = None);
  check "mem" (Arbor.mem c [ "b" ] && not (Arbor.mem c [ "a" ]));
  check "mem_tree" (Arbor.mem_tree c [ "a" ]);
  check "length" (Arbor.length c [] = 2 && Arbor.length c [ "a" ] = 2);
  check "list" (List.map fst (Arbor.list c []) = [ "a"; "b" ]);
  check "list offset" (List.map fst (Arbor.list c ~offset:1 ~length:1 [ "a" ]) = [ "y" ]);
  let keys = Arbor.fold c [] ~order:`Sorted ~init:[] ~f:(fun k _ acc -> String.concat "/" k :: acc) in
  check "fold" (List.rev keys = [ ""; "a"; "a/x"; "a/y"; "b" ]);
  let values =
    Arbor.fold ~depth:(`Eq 2) c [] ~order:`Undefined ~init:0 ~f:(fun _ t n ->
        match Arbor.Tree.kind t with `Value -> n + 1 | `Tree -> n)
  in
  check "fold depth" (values = 2);
  (* An exception raised by the fold function comes out of fold. *)
  (match Arbor.fold c [] ~order:`Sorted ~init:() ~f:(fun k _ () -> if k = [ "b" ] then raise Exit) with
  | () -> fail "fold should raise"
  | exception Exit -> ());
  let sub = Option.get (Arbor.find_tree c [ "a" ]) in
  let c' = Arbor.add_tree c [ "z"; "copy" ] sub in
  check "add_tree" (Arbor.find c' [ "z"; "copy"; "x" ] = Some (b "1"));
  check "remove" (Arbor.Tree.equal (Arbor.get_tree (Arbor.remove c' [ "z" ])) (Arbor.get_tree c));
  check "to_value" (Arbor.Tree.to_value (Option.get (Arbor.find_tree c [ "b" ])) = Some (b "3"));
  let h = Arbor.commit ~time:5L ~message:"m" c in
  check "exists" (Arbor.exists index h);
  Arbor.set_head index "main" h;
  check "head" (Arbor.head index "main" = Some h);
  (* Errors: exceptions naming the problem; checkout of an unknown commit is None. *)
  let zero = Arbor.Hash.of_raw (String.make 32 '\000') in
  check "unknown checkout" (Arbor.checkout index zero = None);
  (match Arbor.find c [ "a"; "" ] with
  | _ -> fail "an empty step must be refused"
  | exception Arbor.Error ("bad path", msg) -> check "message" (msg = "arbor_tree_find: path step 1 is empty"));
  (match Arbor.init dir with
  | _ -> fail "a second writer must be refused"
  | exception Arbor.Error ("locked", _) -> ());
  let reader = Arbor.init ~readonly:true dir in
  ignore (Arbor.sync reader);
  check "read-only sees the commit" (Arbor.exists reader h);
  let h2 = Arbor.commit ~time:6L (Arbor.add (Arbor.checkout_exn index h) [ "n" ] (b "2")) in
  check "not yet synced" (not (Arbor.exists reader h2));
  check "sync" (Arbor.sync reader = 1 && Arbor.exists reader h2);
  (match Arbor.commit ~time:7L (Arbor.checkout_exn reader h2) with
  | _ -> fail "a read-only index must refuse commits"
  | exception Arbor.Error ("read-only", _) -> ());
  Arbor.close reader;
  (match Arbor.commit_info index zero with
  | _ -> fail "unknown commit info"
  | exception Arbor.Error ("unknown commit", _) -> ());
  (match Arbor.set_head index "bad\xffname" h with
  | _ -> fail "non-UTF-8 head"
  | exception Arbor.Error ("invalid UTF-8", _) -> ());
  let snap = Filename.concat dir "snap" in
  Arbor.export_snapshot index h snap;
  let dir2 = temp_dir () in
  let index2 = Arbor.init dir2 in
  check "import" (Arbor.Hash.equal (Arbor.import_snapshot index2 snap) h);
  check "imported" (Arbor.find (Arbor.checkout_exn index2 h) [ "a"; "x" ] = Some (b "1"));
  Arbor.close index2;
  Arbor.close index;
  (match Arbor.find c [ "b" ] with Some _ -> () | None -> fail "a tree outlives its store");
  (match Arbor.commit ~time:0L c with
  | _ -> fail "commit after close"
  | exception Arbor.Error ("closed", _) -> ());
  remove_dir dir;
  remove_dir dir2

(* Replays a trace (crates/arbor-ffi/examples/ffi_trace.rs for the format). *)
let replay file =
  let dir = temp_dir () in
  let index = Arbor.init ~sync_interval_ms:1000 dir in
  let ic = open_in file in
  let ctx = ref (Arbor.empty index) in
  let last = ref None and commits = ref 0 and ops = ref 0 in
  let path tok = if tok = "." then [] else List.map hex_decode (String.split_on_char '/' tok) in
  let value tok = if tok = "-" then None else Some (b (hex_decode (String.sub tok 1 (String.length tok - 1)))) in
  let tree () = Arbor.get_tree !ctx in
  let expect_hash line tok =
    if Arbor.Hash.to_raw (Arbor.Tree.hash (tree ())) <> hex_decode tok then fail "trace line %d: hash differs" line
  in
  let lineno = ref 0 in
  (try
     while true do
       let l = input_line ic in
       incr lineno;
       incr ops;
       let n = !lineno in
       let differs op = fail "trace line %d: %s differs from the Rust API's result" n op in
       match String.split_on_char ' ' l with
       | [ "add"; p; v; h ] ->
           ctx := Arbor.add !ctx (path p) (Option.get (value v));
           expect_hash n h
       | [ "remove"; p; h ] ->
           ctx := Arbor.remove !ctx (path p);
           expect_hash n h
       | [ "find"; p; v ] -> if Arbor.find !ctx (path p) <> value v then differs "find"
       | [ "mem"; p; r ] -> if Arbor.mem !ctx (path p) <> (r = "1") then differs "mem"
       | [ "mem_tree"; p; r ] -> if Arbor.mem_tree !ctx (path p) <> (r = "1") then differs "mem_tree"
       | [ "length"; p; r ] -> if Arbor.length !ctx (path p) <> int_of_string r then differs "length"
       | [ "list"; p; offset; length; steps ] ->
           let got = Arbor.list !ctx ~offset:(int_of_string offset) ~length:(int_of_string length) (path p) in
           let want = if steps = "-" then [] else List.map hex_decode (String.split_on_char ',' steps) in
           if List.map fst got <> want then differs "list";
           List.iter
             (fun (s, t) ->
               let direct = Option.get (Arbor.find_tree !ctx (path p @ [ s ])) in
               if not (Arbor.Tree.equal t direct) then differs "list entry")
             got
       | [ "fold"; p; d; bound; count ] ->
           let k = int_of_string bound in
           let depth =
             match d with
             | "any" -> None
             | "eq" -> Some (`Eq k)
             | "le" -> Some (`Le k)
             | "lt" -> Some (`Lt k)
             | "ge" -> Some (`Ge k)
             | "gt" -> Some (`Gt k)
             | _ -> fail "depth %s" d
           in
           let got = Arbor.fold ?depth !ctx (path p) ~order:`Sorted ~init:0 ~f:(fun _ _ n -> n + 1) in
           if got <> int_of_string count then differs "fold"
       | [ "commit"; h ] ->
           (* The trace's parents are its previous commit, as a checkout would set them. *)
           let parents_ctx =
             match !last with
             | None -> Arbor.set_tree (Arbor.empty index) (tree ())
             | Some p -> Arbor.set_tree (Arbor.checkout_exn index p) (tree ())
           in
           let got = Arbor.commit ~time:(Int64.of_int !commits) ~message:"trace" parents_ctx in
           if Arbor.Hash.to_raw got <> hex_decode h then differs "commit";
           last := Some got;
           incr commits
       | [ "checkout"; h ] -> ctx := Arbor.checkout_exn index (Arbor.Hash.of_string h)
       | [ "hash"; h ] -> expect_hash n h
       | _ -> fail "trace line %d: cannot parse %S" n l
     done
   with End_of_file -> ());
  close_in ic;
  check "a few hundred operations" (!ops >= 300);
  Printf.printf "  trace: %d operations, %d commits, every result as the Rust API's\n" !ops !commits;
  Arbor.close index;
  remove_dir dir

let () =
  Random.self_init ();
  vectors ();
  print_endline "ok vectors";
  api ();
  print_endline "ok api";
  match Sys.argv with
  | [| _; file |] when file <> "" ->
      replay file;
      Gc.full_major ();
      print_endline "ok trace"
  | _ -> print_endline "(no trace given: set ARBOR_TRACE to replay one)"
