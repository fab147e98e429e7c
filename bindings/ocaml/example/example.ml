let () =
  let index = Arbor.init (Filename.concat (Filename.get_temp_dir_name ()) "arbor-example") in
  let key = [ "data"; "contracts"; "global_counter" ] in
  let ctx = Arbor.add (Arbor.empty index) key (Bytes.of_string "\042") in
  let commit = Arbor.commit ~time:0L ~message:"genesis" ctx in
  let ctx = Arbor.checkout_exn index commit in
  assert (Arbor.find ctx key = Some (Bytes.of_string "\042"));
  Arbor.Tree.fold (Arbor.get_tree ctx) [ "data" ] ~order:`Sorted ~init:() ~f:(fun k _ () ->
      print_endline (String.concat "/" k));
  print_endline (Arbor.Hash.to_b58check commit);
  Arbor.close index
