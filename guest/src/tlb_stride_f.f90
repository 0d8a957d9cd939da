! Seed 004 Table 1's program (its Fig. 1) as the paper writes it: the sum of
! 500 elements of one column (contiguous) and of one row (a stride of
! nmax = 3001 doubles, 24008 bytes: a new page per element) of a
! column-major a(3001, 500), each repeated repmax times and timed with
! dtime. The paper declares a(nmax, nmax) but touches only its first 500
! columns; a(nmax, nloop) has the same layout for them and is the C twin's
! (tlb_stride.c) array.
!
! Usage: tlb_stride_f [REPMAX [N]]   (defaults 2000, 500; N <= 500)
!
! Prints the paper's two lines, `continuous SECONDS SUM` and `stride
! SECONDS SUM` (under rvnvmm dtime is simulated time). As in the paper,
! the strided interval also holds the first write; the sums are exact in
! doubles, so they are deterministic. Built -O2 (static only: the riscv64
! sysroot has no libgfortran): gfortran keeps both loops as written, the
! same instructions as the C twin's.
program benchmark
  implicit none
  integer, parameter :: nmax = 3001, nloop = 500
  double precision a(nmax, nloop)
  double precision s
  real seconds, dummy(2)
  integer i, j, rep, repmax, n, status
  character(len=32) arg

  repmax = 2000
  n = nloop
  if (command_argument_count() > 2) call usage()
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *, iostat=status) repmax
    if (status /= 0 .or. repmax <= 0) call usage()
  end if
  if (command_argument_count() >= 2) then
    call get_command_argument(2, arg)
    read (arg, *, iostat=status) n
    if (status /= 0 .or. n <= 0 .or. n > nloop) call usage()
  end if

  do i = 1, nloop
    do j = 1, nloop
      a(i, j) = i + j * nmax
    end do
  end do
  s = 0
  seconds = dtime(dummy)
  do rep = 1, repmax
    do j = 1, n
      s = s + a(j, 1)
    end do
  end do
  seconds = dtime(dummy)
  write (*, *) 'continuous', seconds, s
  s = 0
  do rep = 1, repmax
    do i = 1, n
      s = s + a(1, i)
    end do
  end do
  seconds = dtime(dummy)
  write (*, *) 'stride', seconds, s

contains

  subroutine usage()
    write (0, '(a)') 'usage: tlb_stride_f [REPMAX [N]]   (N <= 500)'
    call exit(2)
  end subroutine usage
end program benchmark
