# sm(y): the running mean of y over the last N rows of the current data
# file (N validations = N*100 server timestamps), restarted at its first row
# (iteration 0). Loaded by the figure scripts; the report's "final" is the
# same mean at the last row.
N = 10
array SM_B[N]
sm_k = 0; sm_s = 0
sm_reset(x) = (sm_k = 0, sm_s = 0, x)
sm_add(y) = (sm_k = sm_k + 1, sm_i = (sm_k - 1) % N + 1, \
    sm_s = sm_s - (sm_k > N ? SM_B[sm_i] : 0) + y, SM_B[sm_i] = y, sm_s / (sm_k < N ? sm_k : N))
sm(y) = (column(1) == 0 ? sm_reset(0) : 0, sm_add(y))
# wr(a, p): the transmit rate over the last N rows, (a - a') / (p - p')
# with a', p' the actual and potential counts N rows earlier (from the
# file's first row while fewer than N rows are in); restarted at iteration 0.
array WR_A[N + 1]
array WR_P[N + 1]
wr_k = 0
wr_add(a, p) = (wr_k = wr_k + 1, wr_i = (wr_k - 1) % (N + 1) + 1, WR_A[wr_i] = a, WR_P[wr_i] = p, \
    wr_j = (wr_k > N ? wr_k - N : 1), wr_j = (wr_j - 1) % (N + 1) + 1, \
    (p > WR_P[wr_j]) ? (a - WR_A[wr_j]) / (p - WR_P[wr_j]) : 1/0)
wr(a, p) = (column(1) == 0 ? wr_k = 0 : 0, wr_add(a, p))
