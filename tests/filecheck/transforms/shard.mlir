// RUN: rlx-opt %s -p 'shard{workers=2 worker-rate=1e9 local-rate=1e9 bandwidth=1e8 latency=1e-3}' | filecheck %s
// RUN: rlx-opt %s -p 'shard{workers=2 worker-rate=1e9 local-rate=1e9 bandwidth=1e8 latency=1e-3 resident=true}' | filecheck %s --check-prefix=RESIDENT
// RUN: rlx-opt %s -p 'shard{workers=2 worker-rate=1e9 local-rate=1e9 bandwidth=1e8 latency=1e-3 resident=true report=true}' -o /dev/null 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: rlx-opt %s -p 'shard{workers=2 calibration=uncalibrated report=true}' 2>&1 | filecheck %s --check-prefix=GUESS
// RUN: not rlx-opt %s -p 'shard{calibration=bogus}' 2>&1 | filecheck %s --check-prefix=BADCAL
// RUN: not rlx-opt %s -p 'shard{workers=2 pieces=3}' 2>&1 | filecheck %s --check-prefix=BADPIECES
// RUN: not rlx-opt %s -p 'shard{latency=-1}' 2>&1 | filecheck %s --check-prefix=BADLATENCY
// RUN: not rlx-opt %s -p 'shard{bandwidth=fast}' 2>&1 | filecheck %s --check-prefix=BADBW

// Rates are multiply-adds per second: the layer's 16384 outputs cost 512 each, 8.4 ms
// locally. Cutting its 8 rows halves the compute (4.2 ms) but ships the 4 MiB weight to
// both workers at 100 MB/s (85 ms): it stays whole, unless the weight is resident
// (then 0.8 ms of rows and outputs + 1 ms latency: 6.0 ms). The product of the softmax
// (16 us of work) never pays the 1 ms latency; softmax itself cannot be cut.
func.func @layer() -> (!rlx.tensor<[8, 2048], f32> {rlx.name = "y"}) {
  %x = mir.input "x" : !rlx.tensor<[8, 512], f32>
  %w = mir.param "w" : !rlx.tensor<[512, 2048], f32>
  %b = mir.param "b" : !rlx.tensor<[2048], f32>
  %h = mir.fused_matmul_bias_act %x, %w, %b act relu : (!rlx.tensor<[8, 512], f32>, !rlx.tensor<[512, 2048], f32>, !rlx.tensor<[2048], f32>) -> !rlx.tensor<[8, 2048], f32>
  %s = mir.softmax %h axis 1 : !rlx.tensor<[8, 2048], f32>
  %y = mir.mul %s, %s : (!rlx.tensor<[8, 2048], f32>, !rlx.tensor<[8, 2048], f32>) -> !rlx.tensor<[8, 2048], f32>
  func.return %y : !rlx.tensor<[8, 2048], f32>
}
// CHECK-LABEL: func.func @layer
// CHECK:         %h = mir.fused_matmul_bias_act %x, %w, %b act relu {rlx.shard = "none"}
// CHECK-NEXT:    %s = mir.softmax %h axis 1 :
// CHECK-NEXT:    %y = mir.mul %s, %s {rlx.shard = "none"}
// RESIDENT-LABEL: func.func @layer
// RESIDENT:         %h = mir.fused_matmul_bias_act %x, %w, %b act relu {rlx.shard = "rows axis 0 [0:4, 4:8] workers [0, 1]"}
// RESIDENT:         %y = mir.mul %s, %s {rlx.shard = "none"}

// A grouped conv (2 groups, 288 multiply-adds per output, 37.7 ms locally) splits by
// group: each worker gets its group's input channels and weights, no operand is
// shared, and 0.93 MB moved (9.3 ms) + 1 ms + 18.9 ms of compute is 29.2 ms. Batch 1
// cannot be cut in two.
func.func @grouped() -> (!rlx.tensor<[1, 128, 32, 32], f32> {rlx.name = "z"}) {
  %x = mir.input "x" : !rlx.tensor<[1, 64, 32, 32], f32>
  %w = mir.param "w" : !rlx.tensor<[128, 32, 3, 3], f32>
  %z = mir.conv %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 2 : (!rlx.tensor<[1, 64, 32, 32], f32>, !rlx.tensor<[128, 32, 3, 3], f32>) -> !rlx.tensor<[1, 128, 32, 32], f32>
  func.return %z : !rlx.tensor<[1, 128, 32, 32], f32>
}
// CHECK-LABEL: func.func @grouped
// CHECK:         mir.conv %x, %w {{.*}} groups 2 {rlx.shard = "out_channels axis 1 [0:64, 64:128] workers [0, 1]"}
// RESIDENT-LABEL: func.func @grouped
// RESIDENT:         groups 2 {rlx.shard = "out_channels axis 1 [0:64, 64:128] workers [0, 1]"}

// Symbolic dims cannot be priced: no decision, no annotation.
func.func @dynamic() -> (!rlx.tensor<[n, 64], f32> {rlx.name = "d"}) {
  %x = mir.input "x" : !rlx.tensor<[n, 64], f32>
  %w = mir.param "w" : !rlx.tensor<[64, 64], f32>
  %d = mir.matmul %x, %w : (!rlx.tensor<[n, 64], f32>, !rlx.tensor<[64, 64], f32>) -> !rlx.tensor<[n, 64], f32>
  func.return %d : !rlx.tensor<[n, 64], f32>
}
// CHECK-LABEL: func.func @dynamic
// CHECK-NOT:     rlx.shard
// CHECK:         func.return

// Per piece: its slices + its output (the weight is resident); the total row adds
// the latency to the bytes over the link; the conv's pieces carry their groups' input.
// REPORT:      # shard report: 3 op(s), 2 split, 1 whole
// REPORT-NEXT: # op	cut	range	worker	bytes	predicted_s	measured_s	note
// REPORT-NEXT: %h	rows axis 0	0:4	w0	40960	4.194e-03	-
// REPORT-NEXT: %h	rows axis 0	4:8	w1	40960	4.194e-03	-
// REPORT-NEXT: %h	total	0:8	-	81920	6.014e-03	-	compute 4.194e-03 + transfer 1.819e-03; local 8.389e-03, shared resident
// REPORT-NEXT: %y	none	-	local	0	1.638e-05	-	running whole is fastest
// REPORT-NEXT: %z	out_channels axis 1	0:64	w0	466944	1.887e-02	-
// REPORT-NEXT: %z	out_channels axis 1	64:128	w1	466944	1.887e-02	-
// REPORT-NEXT: %z	total	0:128	-	933888	2.921e-02	-	compute 1.887e-02 + transfer 1.034e-02; local 3.775e-02, shared resident
// REPORT-EMPTY:

// GUESS: # shard report: 3 op(s), 0 split, 3 whole
// GUESS: %h	none	-	local	0	{{.*}}	-	no worker has a rankable cost model; excluded workers [0, 1] (not rankable)
// GUESS: %h = mir.fused_matmul_bias_act %x, %w, %b act relu {rlx.shard = "none"}
// GUESS: mir.conv {{.*}} {rlx.shard = "none"}

// BADCAL: error: bad options for pass 'shard': unknown calibration 'bogus' (use measured, arch-default, uncalibrated)
// BADPIECES: error: bad options for pass 'shard': pieces=3 must be 0 (one per worker) or in 2..workers
// BADLATENCY: error: bad options for pass 'shard': latency=-1 must be finite and >= 0
// BADBW: error: bad options for pass 'shard': bandwidth='fast' is not a number
