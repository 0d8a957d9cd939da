//! Ground-truth encodings produced by GNU binutils 2.40; regenerate with
//! `python3 crates/isa/tools/gen_testdata.py`. Texts are
//! `objdump -d -M no-aliases` output with `<symbol>`/`# comment` removed.

/// `(pc, word, objdump text)` for 32-bit instructions.
#[rustfmt::skip]
pub(crate) const RV32: &[(u64, u32, &str)] = &[
    (0x0, 0x000014b7, "lui s1,0x1"), // lui s1,0x1
    (0x4, 0xfffffd37, "lui s10,0xfffff"), // lui s10,0xfffff
    (0x8, 0x80000b37, "lui s6,0x80000"), // lui s6,0x80000
    (0xc, 0x80000cb7, "lui s9,0x80000"), // lui s9,0x80000
    (0x10, 0x00000ab7, "lui s5,0x0"), // lui s5,0x0
    (0x14, 0xfffffb37, "lui s6,0xfffff"), // lui s6,0xfffff
    (0x18, 0x00000497, "auipc s1,0x0"), // auipc s1,0x0
    (0x1c, 0x804a9b97, "auipc s7,0x804a9"), // auipc s7,0x804a9
    (0x20, 0x00000197, "auipc gp,0x0"), // auipc gp,0x0
    (0x24, 0xfffffc17, "auipc s8,0xfffff"), // auipc s8,0xfffff
    (0x28, 0x80000897, "auipc a7,0x80000"), // auipc a7,0x80000
    (0x2c, 0x80000317, "auipc t1,0x80000"), // auipc t1,0x80000
    (0x30, 0xffdff76f, "jal a4,2c"), // jal a4,.-4
    (0x34, 0x004006ef, "jal a3,38"), // jal a3,.+4
    (0x38, 0x12c0c1ef, "jal gp,c164"), // jal gp,.+49452
    (0x3c, 0x7ffffeef, "jal t4,10003a"), // jal t4,.+1048574
    (0x40, 0xffdff36f, "jal t1,3c"), // jal t1,.-4
    (0x44, 0xd976ecef, "jal s9,fffffffffff6edda"), // jal s9,.-594538
    (0x48, 0xfff407e7, "jalr a5,-1(s0)"), // jalr a5,-1(s0)
    (0x4c, 0x00198b67, "jalr s6,1(s3)"), // jalr s6,1(s3)
    (0x50, 0xe90c8f67, "jalr t5,-368(s9)"), // jalr t5,-368(s9)
    (0x54, 0x030300e7, "jalr ra,48(t1)"), // jalr ra,48(t1)
    (0x58, 0xfff606e7, "jalr a3,-1(a2)"), // jalr a3,-1(a2)
    (0x5c, 0xfffa8367, "jalr t1,-1(s5)"), // jalr t1,-1(s5)
    (0x60, 0xfe8b8ee3, "beq s7,s0,5c"), // beq s7,s0,.-4
    (0x64, 0x7f768fe3, "beq a3,s7,1062"), // beq a3,s7,.+4094
    (0x68, 0x0af30a63, "beq t1,a5,11c"), // beq t1,a5,.+180
    (0x6c, 0x4a040e63, "beq s0,zero,528"), // beq s0,zero,.+1212
    (0x70, 0x5b190763, "beq s2,a7,61e"), // beq s2,a7,.+1454
    (0x74, 0x81ea8063, "beq s5,t5,fffffffffffff074"), // beq s5,t5,.-4096
    (0x78, 0xe31d9ae3, "bne s11,a7,fffffffffffffeac"), // bne s11,a7,.-460
    (0x7c, 0x7f069fe3, "bne a3,a6,107a"), // bne a3,a6,.+4094
    (0x80, 0x81651063, "bne a0,s6,fffffffffffff080"), // bne a0,s6,.-4096
    (0x84, 0x9c3b1b63, "bne s6,gp,fffffffffffff25a"), // bne s6,gp,.-3626
    (0x88, 0xfe2a1ee3, "bne s4,sp,84"), // bne s4,sp,.-4
    (0x8c, 0xfe739ee3, "bne t2,t2,88"), // bne t2,t2,.-4
    (0x90, 0x9c29c9e3, "blt s3,sp,fffffffffffffa62"), // blt s3,sp,.-1582
    (0x94, 0xff064ee3, "blt a2,a6,90"), // blt a2,a6,.-4
    (0x98, 0xff8c4ee3, "blt s8,s8,94"), // blt s8,s8,.-4
    (0x9c, 0x81dbc063, "blt s7,t4,fffffffffffff09c"), // blt s7,t4,.-4096
    (0xa0, 0x014cc263, "blt s9,s4,a4"), // blt s9,s4,.+4
    (0xa4, 0x81cc4063, "blt s8,t3,fffffffffffff0a4"), // blt s8,t3,.-4096
    (0xa8, 0xe5e753e3, "bge a4,t5,fffffffffffffeee"), // bge a4,t5,.-442
    (0xac, 0x818ad063, "bge s5,s8,fffffffffffff0ac"), // bge s5,s8,.-4096
    (0xb0, 0x81ddd063, "bge s11,t4,fffffffffffff0b0"), // bge s11,t4,.-4096
    (0xb4, 0xfe07dee3, "bge a5,zero,b0"), // bge a5,zero,.-4
    (0xb8, 0xfef1dee3, "bge gp,a5,b4"), // bge gp,a5,.-4
    (0xbc, 0x0089d263, "bge s3,s0,c0"), // bge s3,s0,.+4
    (0xc0, 0x019de263, "bltu s11,s9,c4"), // bltu s11,s9,.+4
    (0xc4, 0x7fca6fe3, "bltu s4,t3,10c2"), // bltu s4,t3,.+4094
    (0xc8, 0xffd26ee3, "bltu tp,t4,c4"), // bltu tp,t4,.-4
    (0xcc, 0x7f496fe3, "bltu s2,s4,10ca"), // bltu s2,s4,.+4094
    (0xd0, 0x7e06efe3, "bltu a3,zero,10ce"), // bltu a3,zero,.+4094
    (0xd4, 0x0126e263, "bltu a3,s2,d8"), // bltu a3,s2,.+4
    (0xd8, 0x2b677de3, "bgeu a4,s6,b92"), // bgeu a4,s6,.+2746
    (0xdc, 0xff207ee3, "bgeu zero,s2,d8"), // bgeu zero,s2,.-4
    (0xe0, 0x7f347fe3, "bgeu s0,s3,10de"), // bgeu s0,s3,.+4094
    (0xe4, 0x01ee7263, "bgeu t3,t5,e8"), // bgeu t3,t5,.+4
    (0xe8, 0xff947ee3, "bgeu s0,s9,e4"), // bgeu s0,s9,.-4
    (0xec, 0x010f7263, "bgeu t5,a6,f0"), // bgeu t5,a6,.+4
    (0xf0, 0xfffe0d83, "lb s11,-1(t3)"), // lb s11,-1(t3)
    (0xf4, 0x00118d83, "lb s11,1(gp)"), // lb s11,1(gp)
    (0xf8, 0xfd528203, "lb tp,-43(t0)"), // lb tp,-43(t0)
    (0xfc, 0x011e0183, "lb gp,17(t3)"), // lb gp,17(t3)
    (0x100, 0x000a0203, "lb tp,0(s4)"), // lb tp,0(s4)
    (0x104, 0x000d0983, "lb s3,0(s10)"), // lb s3,0(s10)
    (0x108, 0xfff19303, "lh t1,-1(gp)"), // lh t1,-1(gp)
    (0x10c, 0x00091783, "lh a5,0(s2)"), // lh a5,0(s2)
    (0x110, 0xfffe1c03, "lh s8,-1(t3)"), // lh s8,-1(t3)
    (0x114, 0xff611f03, "lh t5,-10(sp)"), // lh t5,-10(sp)
    (0x118, 0x800a1983, "lh s3,-2048(s4)"), // lh s3,-2048(s4)
    (0x11c, 0xfff01e03, "lh t3,-1(zero)"), // lh t3,-1(zero)
    (0x120, 0x001bab83, "lw s7,1(s7)"), // lw s7,1(s7)
    (0x124, 0x80072483, "lw s1,-2048(a4)"), // lw s1,-2048(a4)
    (0x128, 0x01282983, "lw s3,18(a6)"), // lw s3,18(a6)
    (0x12c, 0x000a2e83, "lw t4,0(s4)"), // lw t4,0(s4)
    (0x130, 0x7ff4a403, "lw s0,2047(s1)"), // lw s0,2047(s1)
    (0x134, 0x8006a503, "lw a0,-2048(a3)"), // lw a0,-2048(a3)
    (0x138, 0x800fbc83, "ld s9,-2048(t6)"), // ld s9,-2048(t6)
    (0x13c, 0x01ef3703, "ld a4,30(t5)"), // ld a4,30(t5)
    (0x140, 0x7ff0b103, "ld sp,2047(ra)"), // ld sp,2047(ra)
    (0x144, 0x001dbf03, "ld t5,1(s11)"), // ld t5,1(s11)
    (0x148, 0x7ff5b483, "ld s1,2047(a1)"), // ld s1,2047(a1)
    (0x14c, 0x0002bd03, "ld s10,0(t0)"), // ld s10,0(t0)
    (0x150, 0xe1dec503, "lbu a0,-483(t4)"), // lbu a0,-483(t4)
    (0x154, 0x7cd74f83, "lbu t6,1997(a4)"), // lbu t6,1997(a4)
    (0x158, 0x7fffc703, "lbu a4,2047(t6)"), // lbu a4,2047(t6)
    (0x15c, 0xfd104c03, "lbu s8,-47(zero)"), // lbu s8,-47(zero)
    (0x160, 0x01aec003, "lbu zero,26(t4)"), // lbu zero,26(t4)
    (0x164, 0x00024c03, "lbu s8,0(tp)"), // lbu s8,0(tp)
    (0x168, 0x00005e83, "lhu t4,0(zero)"), // lhu t4,0(zero)
    (0x16c, 0x82b25d03, "lhu s10,-2005(tp)"), // lhu s10,-2005(tp)
    (0x170, 0x000dd983, "lhu s3,0(s11)"), // lhu s3,0(s11)
    (0x174, 0x7ff9da03, "lhu s4,2047(s3)"), // lhu s4,2047(s3)
    (0x178, 0x7ff15083, "lhu ra,2047(sp)"), // lhu ra,2047(sp)
    (0x17c, 0x0009d683, "lhu a3,0(s3)"), // lhu a3,0(s3)
    (0x180, 0xfe016703, "lwu a4,-32(sp)"), // lwu a4,-32(sp)
    (0x184, 0x7ffe6703, "lwu a4,2047(t3)"), // lwu a4,2047(t3)
    (0x188, 0x7ffdef83, "lwu t6,2047(s11)"), // lwu t6,2047(s11)
    (0x18c, 0x800fe683, "lwu a3,-2048(t6)"), // lwu a3,-2048(t6)
    (0x190, 0x0009e903, "lwu s2,0(s3)"), // lwu s2,0(s3)
    (0x194, 0x001d6703, "lwu a4,1(s10)"), // lwu a4,1(s10)
    (0x198, 0x01af0023, "sb s10,0(t5)"), // sb s10,0(t5)
    (0x19c, 0x232889a3, "sb s2,563(a7)"), // sb s2,563(a7)
    (0x1a0, 0x7eb88fa3, "sb a1,2047(a7)"), // sb a1,2047(a7)
    (0x1a4, 0x80980023, "sb s1,-2048(a6)"), // sb s1,-2048(a6)
    (0x1a8, 0xa35a8323, "sb s5,-1498(s5)"), // sb s5,-1498(s5)
    (0x1ac, 0xfd488523, "sb s4,-54(a7)"), // sb s4,-54(a7)
    (0x1b0, 0xffac9fa3, "sh s10,-1(s9)"), // sh s10,-1(s9)
    (0x1b4, 0xff6e18a3, "sh s6,-15(t3)"), // sh s6,-15(t3)
    (0x1b8, 0x017490a3, "sh s7,1(s1)"), // sh s7,1(s1)
    (0x1bc, 0x03c495a3, "sh t3,43(s1)"), // sh t3,43(s1)
    (0x1c0, 0x7e151fa3, "sh ra,2047(a0)"), // sh ra,2047(a0)
    (0x1c4, 0x2c2a13a3, "sh sp,711(s4)"), // sh sp,711(s4)
    (0x1c8, 0x80bfa023, "sw a1,-2048(t6)"), // sw a1,-2048(t6)
    (0x1cc, 0x8130a023, "sw s3,-2048(ra)"), // sw s3,-2048(ra)
    (0x1d0, 0x00cc20a3, "sw a2,1(s8)"), // sw a2,1(s8)
    (0x1d4, 0x7e192fa3, "sw ra,2047(s2)"), // sw ra,2047(s2)
    (0x1d8, 0x81c22023, "sw t3,-2048(tp)"), // sw t3,-2048(tp)
    (0x1dc, 0x7f632fa3, "sw s6,2047(t1)"), // sw s6,2047(t1)
    (0x1e0, 0x01293fa3, "sd s2,31(s2)"), // sd s2,31(s2)
    (0x1e4, 0x8063b023, "sd t1,-2048(t2)"), // sd t1,-2048(t2)
    (0x1e8, 0xfe583fa3, "sd t0,-1(a6)"), // sd t0,-1(a6)
    (0x1ec, 0xff273023, "sd s2,-32(a4)"), // sd s2,-32(a4)
    (0x1f0, 0xfe92bfa3, "sd s1,-1(t0)"), // sd s1,-1(t0)
    (0x1f4, 0x7ef1bfa3, "sd a5,2047(gp)"), // sd a5,2047(gp)
    (0x1f8, 0x018b0513, "addi a0,s6,24"), // addi a0,s6,24
    (0x1fc, 0xcbe10593, "addi a1,sp,-834"), // addi a1,sp,-834
    (0x200, 0xfc140593, "addi a1,s0,-63"), // addi a1,s0,-63
    (0x204, 0x00018b93, "addi s7,gp,0"), // addi s7,gp,0
    (0x208, 0xfff78393, "addi t2,a5,-1"), // addi t2,a5,-1
    (0x20c, 0x00158313, "addi t1,a1,1"), // addi t1,a1,1
    (0x210, 0x762a2513, "slti a0,s4,1890"), // slti a0,s4,1890
    (0x214, 0x0014a413, "slti s0,s1,1"), // slti s0,s1,1
    (0x218, 0xfd5ea493, "slti s1,t4,-43"), // slti s1,t4,-43
    (0x21c, 0xfff8a913, "slti s2,a7,-1"), // slti s2,a7,-1
    (0x220, 0x7ff1ac13, "slti s8,gp,2047"), // slti s8,gp,2047
    (0x224, 0xff7ca293, "slti t0,s9,-9"), // slti t0,s9,-9
    (0x228, 0x7ff0b213, "sltiu tp,ra,2047"), // sltiu tp,ra,2047
    (0x22c, 0x80063f13, "sltiu t5,a2,-2048"), // sltiu t5,a2,-2048
    (0x230, 0x800cb613, "sltiu a2,s9,-2048"), // sltiu a2,s9,-2048
    (0x234, 0x7ffeb913, "sltiu s2,t4,2047"), // sltiu s2,t4,2047
    (0x238, 0x0e93b693, "sltiu a3,t2,233"), // sltiu a3,t2,233
    (0x23c, 0x0019b613, "sltiu a2,s3,1"), // sltiu a2,s3,1
    (0x240, 0x00094813, "xori a6,s2,0"), // xori a6,s2,0
    (0x244, 0x0014c593, "xori a1,s1,1"), // xori a1,s1,1
    (0x248, 0x000bce93, "xori t4,s7,0"), // xori t4,s7,0
    (0x24c, 0x800f4813, "xori a6,t5,-2048"), // xori a6,t5,-2048
    (0x250, 0xfff4ce13, "xori t3,s1,-1"), // xori t3,s1,-1
    (0x254, 0x7ffbcb13, "xori s6,s7,2047"), // xori s6,s7,2047
    (0x258, 0x00096a13, "ori s4,s2,0"), // ori s4,s2,0
    (0x25c, 0x926ae113, "ori sp,s5,-1754"), // ori sp,s5,-1754
    (0x260, 0xfffaec93, "ori s9,s5,-1"), // ori s9,s5,-1
    (0x264, 0x00176b93, "ori s7,a4,1"), // ori s7,a4,1
    (0x268, 0x020f6693, "ori a3,t5,32"), // ori a3,t5,32
    (0x26c, 0x33c5e793, "ori a5,a1,828"), // ori a5,a1,828
    (0x270, 0xfcc47813, "andi a6,s0,-52"), // andi a6,s0,-52
    (0x274, 0xfe2bf113, "andi sp,s7,-30"), // andi sp,s7,-30
    (0x278, 0x800b7013, "andi zero,s6,-2048"), // andi zero,s6,-2048
    (0x27c, 0xfff4fb13, "andi s6,s1,-1"), // andi s6,s1,-1
    (0x280, 0xfd91f393, "andi t2,gp,-39"), // andi t2,gp,-39
    (0x284, 0x0011fd13, "andi s10,gp,1"), // andi s10,gp,1
    (0x288, 0x5a8f0e1b, "addiw t3,t5,1448"), // addiw t3,t5,1448
    (0x28c, 0x7ff48e9b, "addiw t4,s1,2047"), // addiw t4,s1,2047
    (0x290, 0x0015801b, "addiw zero,a1,1"), // addiw zero,a1,1
    (0x294, 0xfebc0b1b, "addiw s6,s8,-21"), // addiw s6,s8,-21
    (0x298, 0x8005889b, "addiw a7,a1,-2048"), // addiw a7,a1,-2048
    (0x29c, 0x011f8f9b, "addiw t6,t6,17"), // addiw t6,t6,17
    (0x2a0, 0x02d39993, "slli s3,t2,0x2d"), // slli s3,t2,45
    (0x2a4, 0x02061793, "slli a5,a2,0x20"), // slli a5,a2,32
    (0x2a8, 0x03f71013, "slli zero,a4,0x3f"), // slli zero,a4,63
    (0x2ac, 0x03a31793, "slli a5,t1,0x3a"), // slli a5,t1,58
    (0x2b0, 0x01331493, "slli s1,t1,0x13"), // slli s1,t1,19
    (0x2b4, 0x00ae1c93, "slli s9,t3,0xa"), // slli s9,t3,10
    (0x2b8, 0x020adb93, "srli s7,s5,0x20"), // srli s7,s5,32
    (0x2bc, 0x001fd193, "srli gp,t6,0x1"), // srli gp,t6,1
    (0x2c0, 0x0250d593, "srli a1,ra,0x25"), // srli a1,ra,37
    (0x2c4, 0x02065293, "srli t0,a2,0x20"), // srli t0,a2,32
    (0x2c8, 0x03f3d293, "srli t0,t2,0x3f"), // srli t0,t2,63
    (0x2cc, 0x0019dd93, "srli s11,s3,0x1"), // srli s11,s3,1
    (0x2d0, 0x42035e93, "srai t4,t1,0x20"), // srai t4,t1,32
    (0x2d4, 0x433d5c93, "srai s9,s10,0x33"), // srai s9,s10,51
    (0x2d8, 0x42055713, "srai a4,a0,0x20"), // srai a4,a0,32
    (0x2dc, 0x41fcd713, "srai a4,s9,0x1f"), // srai a4,s9,31
    (0x2e0, 0x43f45113, "srai sp,s0,0x3f"), // srai sp,s0,63
    (0x2e4, 0x42055093, "srai ra,a0,0x20"), // srai ra,a0,32
    (0x2e8, 0x001f921b, "slliw tp,t6,0x1"), // slliw tp,t6,1
    (0x2ec, 0x0013931b, "slliw t1,t2,0x1"), // slliw t1,t2,1
    (0x2f0, 0x007b189b, "slliw a7,s6,0x7"), // slliw a7,s6,7
    (0x2f4, 0x00001d9b, "slliw s11,zero,0x0"), // slliw s11,zero,0
    (0x2f8, 0x0164131b, "slliw t1,s0,0x16"), // slliw t1,s0,22
    (0x2fc, 0x01f1111b, "slliw sp,sp,0x1f"), // slliw sp,sp,31
    (0x300, 0x0002db1b, "srliw s6,t0,0x0"), // srliw s6,t0,0
    (0x304, 0x0012d01b, "srliw zero,t0,0x1"), // srliw zero,t0,1
    (0x308, 0x00dadf1b, "srliw t5,s5,0xd"), // srliw t5,s5,13
    (0x30c, 0x0012d29b, "srliw t0,t0,0x1"), // srliw t0,t0,1
    (0x310, 0x0117de9b, "srliw t4,a5,0x11"), // srliw t4,a5,17
    (0x314, 0x0041531b, "srliw t1,sp,0x4"), // srliw t1,sp,4
    (0x318, 0x40125b1b, "sraiw s6,tp,0x1"), // sraiw s6,tp,1
    (0x31c, 0x41f7d89b, "sraiw a7,a5,0x1f"), // sraiw a7,a5,31
    (0x320, 0x40185f9b, "sraiw t6,a6,0x1"), // sraiw t6,a6,1
    (0x324, 0x41f2531b, "sraiw t1,tp,0x1f"), // sraiw t1,tp,31
    (0x328, 0x41f5df1b, "sraiw t5,a1,0x1f"), // sraiw t5,a1,31
    (0x32c, 0x41fbde1b, "sraiw t3,s7,0x1f"), // sraiw t3,s7,31
    (0x330, 0x01fe0733, "add a4,t3,t6"), // add a4,t3,t6
    (0x334, 0x00b00033, "add zero,zero,a1"), // add zero,zero,a1
    (0x338, 0x00f086b3, "add a3,ra,a5"), // add a3,ra,a5
    (0x33c, 0x006d8f33, "add t5,s11,t1"), // add t5,s11,t1
    (0x340, 0x000a0a33, "add s4,s4,zero"), // add s4,s4,zero
    (0x344, 0x014185b3, "add a1,gp,s4"), // add a1,gp,s4
    (0x348, 0x40c48ab3, "sub s5,s1,a2"), // sub s5,s1,a2
    (0x34c, 0x41540bb3, "sub s7,s0,s5"), // sub s7,s0,s5
    (0x350, 0x419384b3, "sub s1,t2,s9"), // sub s1,t2,s9
    (0x354, 0x40a885b3, "sub a1,a7,a0"), // sub a1,a7,a0
    (0x358, 0x40dd8033, "sub zero,s11,a3"), // sub zero,s11,a3
    (0x35c, 0x41418833, "sub a6,gp,s4"), // sub a6,gp,s4
    (0x360, 0x00c01333, "sll t1,zero,a2"), // sll t1,zero,a2
    (0x364, 0x01831933, "sll s2,t1,s8"), // sll s2,t1,s8
    (0x368, 0x007a13b3, "sll t2,s4,t2"), // sll t2,s4,t2
    (0x36c, 0x00bb93b3, "sll t2,s7,a1"), // sll t2,s7,a1
    (0x370, 0x01d911b3, "sll gp,s2,t4"), // sll gp,s2,t4
    (0x374, 0x013a1e33, "sll t3,s4,s3"), // sll t3,s4,s3
    (0x378, 0x003220b3, "slt ra,tp,gp"), // slt ra,tp,gp
    (0x37c, 0x00952fb3, "slt t6,a0,s1"), // slt t6,a0,s1
    (0x380, 0x00d329b3, "slt s3,t1,a3"), // slt s3,t1,a3
    (0x384, 0x01ce2333, "slt t1,t3,t3"), // slt t1,t3,t3
    (0x388, 0x018f2533, "slt a0,t5,s8"), // slt a0,t5,s8
    (0x38c, 0x00342c33, "slt s8,s0,gp"), // slt s8,s0,gp
    (0x390, 0x0044bdb3, "sltu s11,s1,tp"), // sltu s11,s1,tp
    (0x394, 0x01033fb3, "sltu t6,t1,a6"), // sltu t6,t1,a6
    (0x398, 0x0050b7b3, "sltu a5,ra,t0"), // sltu a5,ra,t0
    (0x39c, 0x010031b3, "sltu gp,zero,a6"), // sltu gp,zero,a6
    (0x3a0, 0x01d03533, "sltu a0,zero,t4"), // sltu a0,zero,t4
    (0x3a4, 0x00f43633, "sltu a2,s0,a5"), // sltu a2,s0,a5
    (0x3a8, 0x01d843b3, "xor t2,a6,t4"), // xor t2,a6,t4
    (0x3ac, 0x00fecfb3, "xor t6,t4,a5"), // xor t6,t4,a5
    (0x3b0, 0x0086cbb3, "xor s7,a3,s0"), // xor s7,a3,s0
    (0x3b4, 0x00cc42b3, "xor t0,s8,a2"), // xor t0,s8,a2
    (0x3b8, 0x01c74933, "xor s2,a4,t3"), // xor s2,a4,t3
    (0x3bc, 0x00414ab3, "xor s5,sp,tp"), // xor s5,sp,tp
    (0x3c0, 0x012d50b3, "srl ra,s10,s2"), // srl ra,s10,s2
    (0x3c4, 0x00e55833, "srl a6,a0,a4"), // srl a6,a0,a4
    (0x3c8, 0x01c152b3, "srl t0,sp,t3"), // srl t0,sp,t3
    (0x3cc, 0x001cd6b3, "srl a3,s9,ra"), // srl a3,s9,ra
    (0x3d0, 0x00d6d1b3, "srl gp,a3,a3"), // srl gp,a3,a3
    (0x3d4, 0x0027d2b3, "srl t0,a5,sp"), // srl t0,a5,sp
    (0x3d8, 0x417753b3, "sra t2,a4,s7"), // sra t2,a4,s7
    (0x3dc, 0x41385633, "sra a2,a6,s3"), // sra a2,a6,s3
    (0x3e0, 0x4173d3b3, "sra t2,t2,s7"), // sra t2,t2,s7
    (0x3e4, 0x41a7d933, "sra s2,a5,s10"), // sra s2,a5,s10
    (0x3e8, 0x4163d033, "sra zero,t2,s6"), // sra zero,t2,s6
    (0x3ec, 0x4111d8b3, "sra a7,gp,a7"), // sra a7,gp,a7
    (0x3f0, 0x01d8e3b3, "or t2,a7,t4"), // or t2,a7,t4
    (0x3f4, 0x01bde6b3, "or a3,s11,s11"), // or a3,s11,s11
    (0x3f8, 0x00866833, "or a6,a2,s0"), // or a6,a2,s0
    (0x3fc, 0x015f6db3, "or s11,t5,s5"), // or s11,t5,s5
    (0x400, 0x00b4e0b3, "or ra,s1,a1"), // or ra,s1,a1
    (0x404, 0x00186eb3, "or t4,a6,ra"), // or t4,a6,ra
    (0x408, 0x005ffb33, "and s6,t6,t0"), // and s6,t6,t0
    (0x40c, 0x010af133, "and sp,s5,a6"), // and sp,s5,a6
    (0x410, 0x01487433, "and s0,a6,s4"), // and s0,a6,s4
    (0x414, 0x00bbfa33, "and s4,s7,a1"), // and s4,s7,a1
    (0x418, 0x012eff33, "and t5,t4,s2"), // and t5,t4,s2
    (0x41c, 0x016dffb3, "and t6,s11,s6"), // and t6,s11,s6
    (0x420, 0x016c09bb, "addw s3,s8,s6"), // addw s3,s8,s6
    (0x424, 0x01460ebb, "addw t4,a2,s4"), // addw t4,a2,s4
    (0x428, 0x0137833b, "addw t1,a5,s3"), // addw t1,a5,s3
    (0x42c, 0x00ff033b, "addw t1,t5,a5"), // addw t1,t5,a5
    (0x430, 0x01ef81bb, "addw gp,t6,t5"), // addw gp,t6,t5
    (0x434, 0x01140a3b, "addw s4,s0,a7"), // addw s4,s0,a7
    (0x438, 0x41208b3b, "subw s6,ra,s2"), // subw s6,ra,s2
    (0x43c, 0x41ad0cbb, "subw s9,s10,s10"), // subw s9,s10,s10
    (0x440, 0x415f843b, "subw s0,t6,s5"), // subw s0,t6,s5
    (0x444, 0x40408f3b, "subw t5,ra,tp"), // subw t5,ra,tp
    (0x448, 0x40618dbb, "subw s11,gp,t1"), // subw s11,gp,t1
    (0x44c, 0x411f803b, "subw zero,t6,a7"), // subw zero,t6,a7
    (0x450, 0x0156163b, "sllw a2,a2,s5"), // sllw a2,a2,s5
    (0x454, 0x009012bb, "sllw t0,zero,s1"), // sllw t0,zero,s1
    (0x458, 0x0098963b, "sllw a2,a7,s1"), // sllw a2,a7,s1
    (0x45c, 0x01fd163b, "sllw a2,s10,t6"), // sllw a2,s10,t6
    (0x460, 0x0062963b, "sllw a2,t0,t1"), // sllw a2,t0,t1
    (0x464, 0x01e313bb, "sllw t2,t1,t5"), // sllw t2,t1,t5
    (0x468, 0x01ba52bb, "srlw t0,s4,s11"), // srlw t0,s4,s11
    (0x46c, 0x0120d6bb, "srlw a3,ra,s2"), // srlw a3,ra,s2
    (0x470, 0x011cdabb, "srlw s5,s9,a7"), // srlw s5,s9,a7
    (0x474, 0x006c533b, "srlw t1,s8,t1"), // srlw t1,s8,t1
    (0x478, 0x00b2d9bb, "srlw s3,t0,a1"), // srlw s3,t0,a1
    (0x47c, 0x01f5dc3b, "srlw s8,a1,t6"), // srlw s8,a1,t6
    (0x480, 0x41f5dbbb, "sraw s7,a1,t6"), // sraw s7,a1,t6
    (0x484, 0x4177d7bb, "sraw a5,a5,s7"), // sraw a5,a5,s7
    (0x488, 0x4191d4bb, "sraw s1,gp,s9"), // sraw s1,gp,s9
    (0x48c, 0x40bb583b, "sraw a6,s6,a1"), // sraw a6,s6,a1
    (0x490, 0x4163dfbb, "sraw t6,t2,s6"), // sraw t6,t2,s6
    (0x494, 0x409a593b, "sraw s2,s4,s1"), // sraw s2,s4,s1
    (0x498, 0x027c8433, "mul s0,s9,t2"), // mul s0,s9,t2
    (0x49c, 0x027605b3, "mul a1,a2,t2"), // mul a1,a2,t2
    (0x4a0, 0x027c8033, "mul zero,s9,t2"), // mul zero,s9,t2
    (0x4a4, 0x03fb08b3, "mul a7,s6,t6"), // mul a7,s6,t6
    (0x4a8, 0x039a07b3, "mul a5,s4,s9"), // mul a5,s4,s9
    (0x4ac, 0x02a90db3, "mul s11,s2,a0"), // mul s11,s2,a0
    (0x4b0, 0x03e010b3, "mulh ra,zero,t5"), // mulh ra,zero,t5
    (0x4b4, 0x03cf9d33, "mulh s10,t6,t3"), // mulh s10,t6,t3
    (0x4b8, 0x02b89d33, "mulh s10,a7,a1"), // mulh s10,a7,a1
    (0x4bc, 0x03e59133, "mulh sp,a1,t5"), // mulh sp,a1,t5
    (0x4c0, 0x02129533, "mulh a0,t0,ra"), // mulh a0,t0,ra
    (0x4c4, 0x03e31bb3, "mulh s7,t1,t5"), // mulh s7,t1,t5
    (0x4c8, 0x02dd20b3, "mulhsu ra,s10,a3"), // mulhsu ra,s10,a3
    (0x4cc, 0x02a82db3, "mulhsu s11,a6,a0"), // mulhsu s11,a6,a0
    (0x4d0, 0x03612233, "mulhsu tp,sp,s6"), // mulhsu tp,sp,s6
    (0x4d4, 0x0262a333, "mulhsu t1,t0,t1"), // mulhsu t1,t0,t1
    (0x4d8, 0x0290a733, "mulhsu a4,ra,s1"), // mulhsu a4,ra,s1
    (0x4dc, 0x037cac33, "mulhsu s8,s9,s7"), // mulhsu s8,s9,s7
    (0x4e0, 0x02363bb3, "mulhu s7,a2,gp"), // mulhu s7,a2,gp
    (0x4e4, 0x03f3ba33, "mulhu s4,t2,t6"), // mulhu s4,t2,t6
    (0x4e8, 0x03bd32b3, "mulhu t0,s10,s11"), // mulhu t0,s10,s11
    (0x4ec, 0x0208ba33, "mulhu s4,a7,zero"), // mulhu s4,a7,zero
    (0x4f0, 0x0338bc33, "mulhu s8,a7,s3"), // mulhu s8,a7,s3
    (0x4f4, 0x02463233, "mulhu tp,a2,tp"), // mulhu tp,a2,tp
    (0x4f8, 0x02f0c9b3, "div s3,ra,a5"), // div s3,ra,a5
    (0x4fc, 0x0392c3b3, "div t2,t0,s9"), // div t2,t0,s9
    (0x500, 0x030340b3, "div ra,t1,a6"), // div ra,t1,a6
    (0x504, 0x03fbc033, "div zero,s7,t6"), // div zero,s7,t6
    (0x508, 0x0354c633, "div a2,s1,s5"), // div a2,s1,s5
    (0x50c, 0x034ece33, "div t3,t4,s4"), // div t3,t4,s4
    (0x510, 0x02015fb3, "divu t6,sp,zero"), // divu t6,sp,zero
    (0x514, 0x036258b3, "divu a7,tp,s6"), // divu a7,tp,s6
    (0x518, 0x02abd6b3, "divu a3,s7,a0"), // divu a3,s7,a0
    (0x51c, 0x032bd2b3, "divu t0,s7,s2"), // divu t0,s7,s2
    (0x520, 0x035ed333, "divu t1,t4,s5"), // divu t1,t4,s5
    (0x524, 0x032154b3, "divu s1,sp,s2"), // divu s1,sp,s2
    (0x528, 0x02636c33, "rem s8,t1,t1"), // rem s8,t1,t1
    (0x52c, 0x02ba6a33, "rem s4,s4,a1"), // rem s4,s4,a1
    (0x530, 0x0328eeb3, "rem t4,a7,s2"), // rem t4,a7,s2
    (0x534, 0x022eea33, "rem s4,t4,sp"), // rem s4,t4,sp
    (0x538, 0x02946db3, "rem s11,s0,s1"), // rem s11,s0,s1
    (0x53c, 0x031c6033, "rem zero,s8,a7"), // rem zero,s8,a7
    (0x540, 0x03007c33, "remu s8,zero,a6"), // remu s8,zero,a6
    (0x544, 0x02047bb3, "remu s7,s0,zero"), // remu s7,s0,zero
    (0x548, 0x02fcf133, "remu sp,s9,a5"), // remu sp,s9,a5
    (0x54c, 0x02ae72b3, "remu t0,t3,a0"), // remu t0,t3,a0
    (0x550, 0x021ffd33, "remu s10,t6,ra"), // remu s10,t6,ra
    (0x554, 0x0226f233, "remu tp,a3,sp"), // remu tp,a3,sp
    (0x558, 0x0220873b, "mulw a4,ra,sp"), // mulw a4,ra,sp
    (0x55c, 0x039b04bb, "mulw s1,s6,s9"), // mulw s1,s6,s9
    (0x560, 0x0322033b, "mulw t1,tp,s2"), // mulw t1,tp,s2
    (0x564, 0x02550e3b, "mulw t3,a0,t0"), // mulw t3,a0,t0
    (0x568, 0x029986bb, "mulw a3,s3,s1"), // mulw a3,s3,s1
    (0x56c, 0x026605bb, "mulw a1,a2,t1"), // mulw a1,a2,t1
    (0x570, 0x02e8cabb, "divw s5,a7,a4"), // divw s5,a7,a4
    (0x574, 0x0328c2bb, "divw t0,a7,s2"), // divw t0,a7,s2
    (0x578, 0x02e04abb, "divw s5,zero,a4"), // divw s5,zero,a4
    (0x57c, 0x0200ccbb, "divw s9,ra,zero"), // divw s9,ra,zero
    (0x580, 0x03694cbb, "divw s9,s2,s6"), // divw s9,s2,s6
    (0x584, 0x0311c9bb, "divw s3,gp,a7"), // divw s3,gp,a7
    (0x588, 0x02e2d3bb, "divuw t2,t0,a4"), // divuw t2,t0,a4
    (0x58c, 0x026153bb, "divuw t2,sp,t1"), // divuw t2,sp,t1
    (0x590, 0x03fa5c3b, "divuw s8,s4,t6"), // divuw s8,s4,t6
    (0x594, 0x02eb593b, "divuw s2,s6,a4"), // divuw s2,s6,a4
    (0x598, 0x02c4d03b, "divuw zero,s1,a2"), // divuw zero,s1,a2
    (0x59c, 0x0372ddbb, "divuw s11,t0,s7"), // divuw s11,t0,s7
    (0x5a0, 0x02d66bbb, "remw s7,a2,a3"), // remw s7,a2,a3
    (0x5a4, 0x034ae5bb, "remw a1,s5,s4"), // remw a1,s5,s4
    (0x5a8, 0x02866ebb, "remw t4,a2,s0"), // remw t4,a2,s0
    (0x5ac, 0x02b8613b, "remw sp,a6,a1"), // remw sp,a6,a1
    (0x5b0, 0x034d60bb, "remw ra,s10,s4"), // remw ra,s10,s4
    (0x5b4, 0x03bcecbb, "remw s9,s9,s11"), // remw s9,s9,s11
    (0x5b8, 0x03587fbb, "remuw t6,a6,s5"), // remuw t6,a6,s5
    (0x5bc, 0x03347dbb, "remuw s11,s0,s3"), // remuw s11,s0,s3
    (0x5c0, 0x0287f8bb, "remuw a7,a5,s0"), // remuw a7,a5,s0
    (0x5c4, 0x031b73bb, "remuw t2,s6,a7"), // remuw t2,s6,a7
    (0x5c8, 0x03087cbb, "remuw s9,a6,a6"), // remuw s9,a6,a6
    (0x5cc, 0x02a778bb, "remuw a7,a4,a0"), // remuw a7,a4,a0
    (0x5d0, 0x0330000f, "fence rw,rw"), // fence rw,rw
    (0x5d4, 0x0f10000f, "fence iorw,w"), // fence iorw,w
    (0x5d8, 0x04f0000f, "fence o,iorw"), // fence o,iorw
    (0x5dc, 0x0220000f, "fence r,r"), // fence r,r
    (0x5e0, 0x8330000f, "fence.tso"), // fence.tso
    (0x5e4, 0x0000100f, "fence.i"), // fence.i
    (0x5e8, 0x00000073, "ecall"), // ecall
    (0x5ec, 0x00100073, "ebreak"), // ebreak
    (0x5f0, 0x30200073, "mret"), // mret
    (0x5f4, 0x10200073, "sret"), // sret
    (0x5f8, 0x10500073, "wfi"), // wfi
    (0x5fc, 0xc0001073, "unimp"), // unimp
    (0x600, 0x12098073, "sfence.vma s3,zero"), // sfence.vma s3,zero
    (0x604, 0x12458073, "sfence.vma a1,tp"), // sfence.vma a1,tp
    (0x608, 0x12218073, "sfence.vma gp,sp"), // sfence.vma gp,sp
    (0x60c, 0x130c0073, "sfence.vma s8,a6"), // sfence.vma s8,a6
    (0x610, 0x13c58073, "sfence.vma a1,t3"), // sfence.vma a1,t3
    (0x614, 0x125d0073, "sfence.vma s10,t0"), // sfence.vma s10,t0
    (0x618, 0x7ffb1b73, "csrrw s6,0x7ff,s6"), // csrrw s6,0x7ff,s6
    (0x61c, 0xf13d1973, "csrrw s2,mimpid,s10"), // csrrw s2,mimpid,s10
    (0x620, 0x342d1b73, "csrrw s6,mcause,s10"), // csrrw s6,mcause,s10
    (0x624, 0xf14f9cf3, "csrrw s9,mhartid,t6"), // csrrw s9,mhartid,t6
    (0x628, 0xb0051ef3, "csrrw t4,mcycle,a0"), // csrrw t4,mcycle,a0
    (0x62c, 0x144d1173, "csrrw sp,sip,s10"), // csrrw sp,sip,s10
    (0x630, 0x3054a473, "csrrs s0,mtvec,s1"), // csrrs s0,mtvec,s1
    (0x634, 0x3a242df3, "csrrs s11,pmpcfg2,s0"), // csrrs s11,pmpcfg2,s0
    (0x638, 0x3033af73, "csrrs t5,mideleg,t2"), // csrrs t5,mideleg,t2
    (0x63c, 0x30582b73, "csrrs s6,mtvec,a6"), // csrrs s6,mtvec,a6
    (0x640, 0xf137a2f3, "csrrs t0,mimpid,a5"), // csrrs t0,mimpid,a5
    (0x644, 0xfc09af73, "csrrs t5,0xfc0,s3"), // csrrs t5,0xfc0,s3
    (0x648, 0x00123d73, "csrrc s10,fflags,tp"), // csrrc s10,fflags,tp
    (0x64c, 0x104139f3, "csrrc s3,sie,sp"), // csrrc s3,sie,sp
    (0x650, 0x001cb973, "csrrc s2,fflags,s9"), // csrrc s2,fflags,s9
    (0x654, 0x303cb973, "csrrc s2,mideleg,s9"), // csrrc s2,mideleg,s9
    (0x658, 0x3009b473, "csrrc s0,mstatus,s3"), // csrrc s0,mstatus,s3
    (0x65c, 0x1809b1f3, "csrrc gp,satp,s3"), // csrrc gp,satp,s3
    (0x660, 0x7ff4d873, "csrrwi a6,0x7ff,9"), // csrrwi a6,0x7ff,9
    (0x664, 0x14255c73, "csrrwi s8,scause,10"), // csrrwi s8,scause,10
    (0x668, 0x3026d0f3, "csrrwi ra,medeleg,13"), // csrrwi ra,medeleg,13
    (0x66c, 0x1042d773, "csrrwi a4,sie,5"), // csrrwi a4,sie,5
    (0x670, 0x300bd8f3, "csrrwi a7,mstatus,23"), // csrrwi a7,mstatus,23
    (0x674, 0x303d51f3, "csrrwi gp,mideleg,26"), // csrrwi gp,mideleg,26
    (0x678, 0x3a00e173, "csrrsi sp,pmpcfg0,1"), // csrrsi sp,pmpcfg0,1
    (0x67c, 0x340167f3, "csrrsi a5,mscratch,2"), // csrrsi a5,mscratch,2
    (0x680, 0xf11bebf3, "csrrsi s7,mvendorid,23"), // csrrsi s7,mvendorid,23
    (0x684, 0x1043e1f3, "csrrsi gp,sie,7"), // csrrsi gp,sie,7
    (0x688, 0x344e69f3, "csrrsi s3,mip,28"), // csrrsi s3,mip,28
    (0x68c, 0x106a6d73, "csrrsi s10,scounteren,20"), // csrrsi s10,scounteren,20
    (0x690, 0x30147673, "csrrci a2,misa,8"), // csrrci a2,misa,8
    (0x694, 0x1005f873, "csrrci a6,sstatus,11"), // csrrci a6,sstatus,11
    (0x698, 0x105dfa73, "csrrci s4,stvec,27"), // csrrci s4,stvec,27
    (0x69c, 0x1041f873, "csrrci a6,sie,3"), // csrrci a6,sie,3
    (0x6a0, 0x14427b73, "csrrci s6,sip,4"), // csrrci s6,sip,4
    (0x6a4, 0x14377ef3, "csrrci t4,stval,14"), // csrrci t4,stval,14
    (0x6a8, 0x160a232f, "lr.w.aqrl t1,(s4)"), // lr.w.aqrl t1,(s4)
    (0x6ac, 0x100ba82f, "lr.w a6,(s7)"), // lr.w a6,(s7)
    (0x6b0, 0x160222af, "lr.w.aqrl t0,(tp)"), // lr.w.aqrl t0,(tp)
    (0x6b4, 0x160c292f, "lr.w.aqrl s2,(s8)"), // lr.w.aqrl s2,(s8)
    (0x6b8, 0x14012caf, "lr.w.aq s9,(sp)"), // lr.w.aq s9,(sp)
    (0x6bc, 0x1600adaf, "lr.w.aqrl s11,(ra)"), // lr.w.aqrl s11,(ra)
    (0x6c0, 0x1cf621af, "sc.w.aq gp,a5,(a2)"), // sc.w.aq gp,a5,(a2)
    (0x6c4, 0x1e6422af, "sc.w.aqrl t0,t1,(s0)"), // sc.w.aqrl t0,t1,(s0)
    (0x6c8, 0x1ad12faf, "sc.w.rl t6,a3,(sp)"), // sc.w.rl t6,a3,(sp)
    (0x6cc, 0x1f21afaf, "sc.w.aqrl t6,s2,(gp)"), // sc.w.aqrl t6,s2,(gp)
    (0x6d0, 0x1ec9aa2f, "sc.w.aqrl s4,a2,(s3)"), // sc.w.aqrl s4,a2,(s3)
    (0x6d4, 0x193e222f, "sc.w tp,s3,(t3)"), // sc.w tp,s3,(t3)
    (0x6d8, 0x0fafad2f, "amoswap.w.aqrl s10,s10,(t6)"), // amoswap.w.aqrl s10,s10,(t6)
    (0x6dc, 0x0c43a2af, "amoswap.w.aq t0,tp,(t2)"), // amoswap.w.aq t0,tp,(t2)
    (0x6e0, 0x0931af2f, "amoswap.w t5,s3,(gp)"), // amoswap.w t5,s3,(gp)
    (0x6e4, 0x0debae2f, "amoswap.w.aq t3,t5,(s7)"), // amoswap.w.aq t3,t5,(s7)
    (0x6e8, 0x0b0aa8af, "amoswap.w.rl a7,a6,(s5)"), // amoswap.w.rl a7,a6,(s5)
    (0x6ec, 0x082d272f, "amoswap.w a4,sp,(s10)"), // amoswap.w a4,sp,(s10)
    (0x6f0, 0x07e3aa2f, "amoadd.w.aqrl s4,t5,(t2)"), // amoadd.w.aqrl s4,t5,(t2)
    (0x6f4, 0x03cfae2f, "amoadd.w.rl t3,t3,(t6)"), // amoadd.w.rl t3,t3,(t6)
    (0x6f8, 0x030a2faf, "amoadd.w.rl t6,a6,(s4)"), // amoadd.w.rl t6,a6,(s4)
    (0x6fc, 0x053b26af, "amoadd.w.aq a3,s3,(s6)"), // amoadd.w.aq a3,s3,(s6)
    (0x700, 0x00bdacaf, "amoadd.w s9,a1,(s11)"), // amoadd.w s9,a1,(s11)
    (0x704, 0x045127af, "amoadd.w.aq a5,t0,(sp)"), // amoadd.w.aq a5,t0,(sp)
    (0x708, 0x262fa22f, "amoxor.w.aqrl tp,sp,(t6)"), // amoxor.w.aqrl tp,sp,(t6)
    (0x70c, 0x2018ae2f, "amoxor.w t3,ra,(a7)"), // amoxor.w t3,ra,(a7)
    (0x710, 0x2393a22f, "amoxor.w.rl tp,s9,(t2)"), // amoxor.w.rl tp,s9,(t2)
    (0x714, 0x2224242f, "amoxor.w.rl s0,sp,(s0)"), // amoxor.w.rl s0,sp,(s0)
    (0x718, 0x245c242f, "amoxor.w.aq s0,t0,(s8)"), // amoxor.w.aq s0,t0,(s8)
    (0x71c, 0x27e22daf, "amoxor.w.aqrl s11,t5,(tp)"), // amoxor.w.aqrl s11,t5,(tp)
    (0x720, 0x63b4aaaf, "amoand.w.rl s5,s11,(s1)"), // amoand.w.rl s5,s11,(s1)
    (0x724, 0x6164252f, "amoand.w a0,s6,(s0)"), // amoand.w a0,s6,(s0)
    (0x728, 0x619aa12f, "amoand.w sp,s9,(s5)"), // amoand.w sp,s9,(s5)
    (0x72c, 0x65cbad2f, "amoand.w.aq s10,t3,(s7)"), // amoand.w.aq s10,t3,(s7)
    (0x730, 0x61b2ae2f, "amoand.w t3,s11,(t0)"), // amoand.w t3,s11,(t0)
    (0x734, 0x624eadaf, "amoand.w.rl s11,tp,(t4)"), // amoand.w.rl s11,tp,(t4)
    (0x738, 0x418dacaf, "amoor.w s9,s8,(s11)"), // amoor.w s9,s8,(s11)
    (0x73c, 0x47622b2f, "amoor.w.aqrl s6,s6,(tp)"), // amoor.w.aqrl s6,s6,(tp)
    (0x740, 0x479dab2f, "amoor.w.aqrl s6,s9,(s11)"), // amoor.w.aqrl s6,s9,(s11)
    (0x744, 0x43142daf, "amoor.w.rl s11,a7,(s0)"), // amoor.w.rl s11,a7,(s0)
    (0x748, 0x44d9a8af, "amoor.w.aq a7,a3,(s3)"), // amoor.w.aq a7,a3,(s3)
    (0x74c, 0x471c272f, "amoor.w.aqrl a4,a7,(s8)"), // amoor.w.aqrl a4,a7,(s8)
    (0x750, 0x8590a52f, "amomin.w.aq a0,s9,(ra)"), // amomin.w.aq a0,s9,(ra)
    (0x754, 0x811eabaf, "amomin.w s7,a7,(t4)"), // amomin.w s7,a7,(t4)
    (0x758, 0x82e8ae2f, "amomin.w.rl t3,a4,(a7)"), // amomin.w.rl t3,a4,(a7)
    (0x75c, 0x828fa2af, "amomin.w.rl t0,s0,(t6)"), // amomin.w.rl t0,s0,(t6)
    (0x760, 0x816fae2f, "amomin.w t3,s6,(t6)"), // amomin.w t3,s6,(t6)
    (0x764, 0x8124a9af, "amomin.w s3,s2,(s1)"), // amomin.w s3,s2,(s1)
    (0x768, 0xa5212eaf, "amomax.w.aq t4,s2,(sp)"), // amomax.w.aq t4,s2,(sp)
    (0x76c, 0xa635a1af, "amomax.w.aqrl gp,gp,(a1)"), // amomax.w.aqrl gp,gp,(a1)
    (0x770, 0xa7912caf, "amomax.w.aqrl s9,s9,(sp)"), // amomax.w.aqrl s9,s9,(sp)
    (0x774, 0xa749ac2f, "amomax.w.aqrl s8,s4,(s3)"), // amomax.w.aqrl s8,s4,(s3)
    (0x778, 0xa170afaf, "amomax.w t6,s7,(ra)"), // amomax.w t6,s7,(ra)
    (0x77c, 0xa3642a2f, "amomax.w.rl s4,s6,(s0)"), // amomax.w.rl s4,s6,(s0)
    (0x780, 0xc7b82e2f, "amominu.w.aqrl t3,s11,(a6)"), // amominu.w.aqrl t3,s11,(a6)
    (0x784, 0xc371a6af, "amominu.w.rl a3,s7,(gp)"), // amominu.w.rl a3,s7,(gp)
    (0x788, 0xc7652aaf, "amominu.w.aqrl s5,s6,(a0)"), // amominu.w.aqrl s5,s6,(a0)
    (0x78c, 0xc69ba5af, "amominu.w.aqrl a1,s1,(s7)"), // amominu.w.aqrl a1,s1,(s7)
    (0x790, 0xc492a3af, "amominu.w.aq t2,s1,(t0)"), // amominu.w.aq t2,s1,(t0)
    (0x794, 0xc145222f, "amominu.w tp,s4,(a0)"), // amominu.w tp,s4,(a0)
    (0x798, 0xe4ed2baf, "amomaxu.w.aq s7,a4,(s10)"), // amomaxu.w.aq s7,a4,(s10)
    (0x79c, 0xe09ba9af, "amomaxu.w s3,s1,(s7)"), // amomaxu.w s3,s1,(s7)
    (0x7a0, 0xe251a82f, "amomaxu.w.rl a6,t0,(gp)"), // amomaxu.w.rl a6,t0,(gp)
    (0x7a4, 0xe3ba2daf, "amomaxu.w.rl s11,s11,(s4)"), // amomaxu.w.rl s11,s11,(s4)
    (0x7a8, 0xe2cb2eaf, "amomaxu.w.rl t4,a2,(s6)"), // amomaxu.w.rl t4,a2,(s6)
    (0x7ac, 0xe7d6a42f, "amomaxu.w.aqrl s0,t4,(a3)"), // amomaxu.w.aqrl s0,t4,(a3)
    (0x7b0, 0x120abb2f, "lr.d.rl s6,(s5)"), // lr.d.rl s6,(s5)
    (0x7b4, 0x1206362f, "lr.d.rl a2,(a2)"), // lr.d.rl a2,(a2)
    (0x7b8, 0x1609bcaf, "lr.d.aqrl s9,(s3)"), // lr.d.aqrl s9,(s3)
    (0x7bc, 0x120935af, "lr.d.rl a1,(s2)"), // lr.d.rl a1,(s2)
    (0x7c0, 0x160c352f, "lr.d.aqrl a0,(s8)"), // lr.d.aqrl a0,(s8)
    (0x7c4, 0x1203bcaf, "lr.d.rl s9,(t2)"), // lr.d.rl s9,(t2)
    (0x7c8, 0x1ebbbaaf, "sc.d.aqrl s5,a1,(s7)"), // sc.d.aqrl s5,a1,(s7)
    (0x7cc, 0x194a39af, "sc.d s3,s4,(s4)"), // sc.d s3,s4,(s4)
    (0x7d0, 0x1f3ebb2f, "sc.d.aqrl s6,s3,(t4)"), // sc.d.aqrl s6,s3,(t4)
    (0x7d4, 0x1c893daf, "sc.d.aq s11,s0,(s2)"), // sc.d.aq s11,s0,(s2)
    (0x7d8, 0x195db82f, "sc.d a6,s5,(s11)"), // sc.d a6,s5,(s11)
    (0x7dc, 0x1dd5b9af, "sc.d.aq s3,t4,(a1)"), // sc.d.aq s3,t4,(a1)
    (0x7e0, 0x0b6f3eaf, "amoswap.d.rl t4,s6,(t5)"), // amoswap.d.rl t4,s6,(t5)
    (0x7e4, 0x0cd6342f, "amoswap.d.aq s0,a3,(a2)"), // amoswap.d.aq s0,a3,(a2)
    (0x7e8, 0x0d2ebeaf, "amoswap.d.aq t4,s2,(t4)"), // amoswap.d.aq t4,s2,(t4)
    (0x7ec, 0x08f037af, "amoswap.d a5,a5,(zero)"), // amoswap.d a5,a5,(zero)
    (0x7f0, 0x093cbe2f, "amoswap.d t3,s3,(s9)"), // amoswap.d t3,s3,(s9)
    (0x7f4, 0x0f49352f, "amoswap.d.aqrl a0,s4,(s2)"), // amoswap.d.aqrl a0,s4,(s2)
    (0x7f8, 0x07babbaf, "amoadd.d.aqrl s7,s11,(s5)"), // amoadd.d.aqrl s7,s11,(s5)
    (0x7fc, 0x027a35af, "amoadd.d.rl a1,t2,(s4)"), // amoadd.d.rl a1,t2,(s4)
    (0x800, 0x027736af, "amoadd.d.rl a3,t2,(a4)"), // amoadd.d.rl a3,t2,(a4)
    (0x804, 0x07933eaf, "amoadd.d.aqrl t4,s9,(t1)"), // amoadd.d.aqrl t4,s9,(t1)
    (0x808, 0x06f438af, "amoadd.d.aqrl a7,a5,(s0)"), // amoadd.d.aqrl a7,a5,(s0)
    (0x80c, 0x0083b8af, "amoadd.d a7,s0,(t2)"), // amoadd.d a7,s0,(t2)
    (0x810, 0x26b2bb2f, "amoxor.d.aqrl s6,a1,(t0)"), // amoxor.d.aqrl s6,a1,(t0)
    (0x814, 0x2324382f, "amoxor.d.rl a6,s2,(s0)"), // amoxor.d.rl a6,s2,(s0)
    (0x818, 0x252e342f, "amoxor.d.aq s0,s2,(t3)"), // amoxor.d.aq s0,s2,(t3)
    (0x81c, 0x257f3aaf, "amoxor.d.aq s5,s7,(t5)"), // amoxor.d.aq s5,s7,(t5)
    (0x820, 0x267138af, "amoxor.d.aqrl a7,t2,(sp)"), // amoxor.d.aqrl a7,t2,(sp)
    (0x824, 0x233638af, "amoxor.d.rl a7,s3,(a2)"), // amoxor.d.rl a7,s3,(a2)
    (0x828, 0x6206302f, "amoand.d.rl zero,zero,(a2)"), // amoand.d.rl zero,zero,(a2)
    (0x82c, 0x6481352f, "amoand.d.aq a0,s0,(sp)"), // amoand.d.aq a0,s0,(sp)
    (0x830, 0x62ae3daf, "amoand.d.rl s11,a0,(t3)"), // amoand.d.rl s11,a0,(t3)
    (0x834, 0x66c538af, "amoand.d.aqrl a7,a2,(a0)"), // amoand.d.aqrl a7,a2,(a0)
    (0x838, 0x65a9302f, "amoand.d.aq zero,s10,(s2)"), // amoand.d.aq zero,s10,(s2)
    (0x83c, 0x6526332f, "amoand.d.aq t1,s2,(a2)"), // amoand.d.aq t1,s2,(a2)
    (0x840, 0x44cdb52f, "amoor.d.aq a0,a2,(s11)"), // amoor.d.aq a0,a2,(s11)
    (0x844, 0x42df312f, "amoor.d.rl sp,a3,(t5)"), // amoor.d.rl sp,a3,(t5)
    (0x848, 0x43c1bf2f, "amoor.d.rl t5,t3,(gp)"), // amoor.d.rl t5,t3,(gp)
    (0x84c, 0x450ebbaf, "amoor.d.aq s7,a6,(t4)"), // amoor.d.aq s7,a6,(t4)
    (0x850, 0x41ffbbaf, "amoor.d s7,t6,(t6)"), // amoor.d s7,t6,(t6)
    (0x854, 0x47a23b2f, "amoor.d.aqrl s6,s10,(tp)"), // amoor.d.aqrl s6,s10,(tp)
    (0x858, 0x83dfba2f, "amomin.d.rl s4,t4,(t6)"), // amomin.d.rl s4,t4,(t6)
    (0x85c, 0x82f7bf2f, "amomin.d.rl t5,a5,(a5)"), // amomin.d.rl t5,a5,(a5)
    (0x860, 0x86ec392f, "amomin.d.aqrl s2,a4,(s8)"), // amomin.d.aqrl s2,a4,(s8)
    (0x864, 0x80cbbcaf, "amomin.d s9,a2,(s7)"), // amomin.d s9,a2,(s7)
    (0x868, 0x865530af, "amomin.d.aqrl ra,t0,(a0)"), // amomin.d.aqrl ra,t0,(a0)
    (0x86c, 0x85383a2f, "amomin.d.aq s4,s3,(a6)"), // amomin.d.aq s4,s3,(a6)
    (0x870, 0xa42bb92f, "amomax.d.aq s2,sp,(s7)"), // amomax.d.aq s2,sp,(s7)
    (0x874, 0xa38db62f, "amomax.d.rl a2,s8,(s11)"), // amomax.d.rl a2,s8,(s11)
    (0x878, 0xa1c8bbaf, "amomax.d s7,t3,(a7)"), // amomax.d s7,t3,(a7)
    (0x87c, 0xa163b42f, "amomax.d s0,s6,(t2)"), // amomax.d s0,s6,(t2)
    (0x880, 0xa134372f, "amomax.d a4,s3,(s0)"), // amomax.d a4,s3,(s0)
    (0x884, 0xa43d3f2f, "amomax.d.aq t5,gp,(s10)"), // amomax.d.aq t5,gp,(s10)
    (0x888, 0xc5f933af, "amominu.d.aq t2,t6,(s2)"), // amominu.d.aq t2,t6,(s2)
    (0x88c, 0xc786b2af, "amominu.d.aqrl t0,s8,(a3)"), // amominu.d.aqrl t0,s8,(a3)
    (0x890, 0xc00d362f, "amominu.d a2,zero,(s10)"), // amominu.d a2,zero,(s10)
    (0x894, 0xc4333baf, "amominu.d.aq s7,gp,(t1)"), // amominu.d.aq s7,gp,(t1)
    (0x898, 0xc580b72f, "amominu.d.aq a4,s8,(ra)"), // amominu.d.aq a4,s8,(ra)
    (0x89c, 0xc11b3aaf, "amominu.d s5,a7,(s6)"), // amominu.d s5,a7,(s6)
    (0x8a0, 0xe37cb6af, "amomaxu.d.rl a3,s7,(s9)"), // amomaxu.d.rl a3,s7,(s9)
    (0x8a4, 0xe7ba37af, "amomaxu.d.aqrl a5,s11,(s4)"), // amomaxu.d.aqrl a5,s11,(s4)
    (0x8a8, 0xe19f33af, "amomaxu.d t2,s9,(t5)"), // amomaxu.d t2,s9,(t5)
    (0x8ac, 0xe4493e2f, "amomaxu.d.aq t3,tp,(s2)"), // amomaxu.d.aq t3,tp,(s2)
    (0x8b0, 0xe336b22f, "amomaxu.d.rl tp,s3,(a3)"), // amomaxu.d.rl tp,s3,(a3)
    (0x8b4, 0xe610b92f, "amomaxu.d.aqrl s2,ra,(ra)"), // amomaxu.d.aqrl s2,ra,(ra)
    (0x8b8, 0x8005a687, "flw fa3,-2048(a1)"), // flw fa3,-2048(a1)
    (0x8bc, 0x7ff4ad07, "flw fs10,2047(s1)"), // flw fs10,2047(s1)
    (0x8c0, 0x000a2d07, "flw fs10,0(s4)"), // flw fs10,0(s4)
    (0x8c4, 0xfe50a307, "flw ft6,-27(ra)"), // flw ft6,-27(ra)
    (0x8c8, 0xff022907, "flw fs2,-16(tp)"), // flw fs2,-16(tp)
    (0x8cc, 0x0001ab07, "flw fs6,0(gp)"), // flw fs6,0(gp)
    (0x8d0, 0xff1a23a7, "fsw fa7,-25(s4)"), // fsw fa7,-25(s4)
    (0x8d4, 0x0c2d2027, "fsw ft2,192(s10)"), // fsw ft2,192(s10)
    (0x8d8, 0x01c52027, "fsw ft8,0(a0)"), // fsw ft8,0(a0)
    (0x8dc, 0x006020a7, "fsw ft6,1(zero)"), // fsw ft6,1(zero)
    (0x8e0, 0x8a34ada7, "fsw ft3,-1861(s1)"), // fsw ft3,-1861(s1)
    (0x8e4, 0x7f7e2fa7, "fsw fs7,2047(t3)"), // fsw fs7,2047(t3)
    (0x8e8, 0x783884c3, "fmadd.s fs1,fa7,ft3,fa5,rne"), // fmadd.s fs1,fa7,ft3,fa5,rne
    (0x8ec, 0x21cc3ac3, "fmadd.s fs5,fs8,ft8,ft4,rup"), // fmadd.s fs5,fs8,ft8,ft4,rup
    (0x8f0, 0x680235c3, "fmadd.s fa1,ft4,ft0,fa3,rup"), // fmadd.s fa1,ft4,ft0,fa3,rup
    (0x8f4, 0x20b58343, "fmadd.s ft6,fa1,fa1,ft4,rne"), // fmadd.s ft6,fa1,fa1,ft4,rne
    (0x8f8, 0xc1ca0ec3, "fmadd.s ft9,fs4,ft8,fs8,rne"), // fmadd.s ft9,fs4,ft8,fs8,rne
    (0x8fc, 0xf91f3243, "fmadd.s ft4,ft10,fa7,ft11,rup"), // fmadd.s ft4,ft10,fa7,ft11,rup
    (0x900, 0x809cfec7, "fmsub.s ft9,fs9,fs1,fa6"), // fmsub.s ft9,fs9,fs1,fa6,dyn
    (0x904, 0x40ac21c7, "fmsub.s ft3,fs8,fa0,fs0,rdn"), // fmsub.s ft3,fs8,fa0,fs0,rdn
    (0x908, 0x488c9147, "fmsub.s ft2,fs9,fs0,fs1,rtz"), // fmsub.s ft2,fs9,fs0,fs1,rtz
    (0x90c, 0x785d4647, "fmsub.s fa2,fs10,ft5,fa5,rmm"), // fmsub.s fa2,fs10,ft5,fa5,rmm
    (0x910, 0x6189f1c7, "fmsub.s ft3,fs3,fs8,fa2"), // fmsub.s ft3,fs3,fs8,fa2
    (0x914, 0xf8578847, "fmsub.s fa6,fa5,ft5,ft11,rne"), // fmsub.s fa6,fa5,ft5,ft11,rne
    (0x918, 0x8063f64b, "fnmsub.s fa2,ft7,ft6,fa6"), // fnmsub.s fa2,ft7,ft6,fa6
    (0x91c, 0xb0640bcb, "fnmsub.s fs7,fs0,ft6,fs6,rne"), // fnmsub.s fs7,fs0,ft6,fs6,rne
    (0x920, 0xb8552d4b, "fnmsub.s fs10,fa0,ft5,fs7,rdn"), // fnmsub.s fs10,fa0,ft5,fs7,rdn
    (0x924, 0xf9a8f6cb, "fnmsub.s fa3,fa7,fs10,ft11"), // fnmsub.s fa3,fa7,fs10,ft11
    (0x928, 0xb99c46cb, "fnmsub.s fa3,fs8,fs9,fs7,rmm"), // fnmsub.s fa3,fs8,fs9,fs7,rmm
    (0x92c, 0x9850984b, "fnmsub.s fa6,ft1,ft5,fs3,rtz"), // fnmsub.s fa6,ft1,ft5,fs3,rtz
    (0x930, 0xb1331c4f, "fnmadd.s fs8,ft6,fs3,fs6,rtz"), // fnmadd.s fs8,ft6,fs3,fs6,rtz
    (0x934, 0x598ec1cf, "fnmadd.s ft3,ft9,fs8,fa1,rmm"), // fnmadd.s ft3,ft9,fs8,fa1,rmm
    (0x938, 0x41af0dcf, "fnmadd.s fs11,ft10,fs10,fs0,rne"), // fnmadd.s fs11,ft10,fs10,fs0,rne
    (0x93c, 0x90d67dcf, "fnmadd.s fs11,fa2,fa3,fs2"), // fnmadd.s fs11,fa2,fa3,fs2,dyn
    (0x940, 0x195cadcf, "fnmadd.s fs11,fs9,fs5,ft3,rdn"), // fnmadd.s fs11,fs9,fs5,ft3,rdn
    (0x944, 0x913fb84f, "fnmadd.s fa6,ft11,fs3,fs2,rup"), // fnmadd.s fa6,ft11,fs3,fs2,rup
    (0x948, 0x00332fd3, "fadd.s ft11,ft6,ft3,rdn"), // fadd.s ft11,ft6,ft3,rdn
    (0x94c, 0x00d47853, "fadd.s fa6,fs0,fa3"), // fadd.s fa6,fs0,fa3
    (0x950, 0x00383353, "fadd.s ft6,fa6,ft3,rup"), // fadd.s ft6,fa6,ft3,rup
    (0x954, 0x019724d3, "fadd.s fs1,fa4,fs9,rdn"), // fadd.s fs1,fa4,fs9,rdn
    (0x958, 0x01c4ca53, "fadd.s fs4,fs1,ft8,rmm"), // fadd.s fs4,fs1,ft8,rmm
    (0x95c, 0x0047f7d3, "fadd.s fa5,fa5,ft4"), // fadd.s fa5,fa5,ft4
    (0x960, 0x084fc0d3, "fsub.s ft1,ft11,ft4,rmm"), // fsub.s ft1,ft11,ft4,rmm
    (0x964, 0x09e2f3d3, "fsub.s ft7,ft5,ft10"), // fsub.s ft7,ft5,ft10,dyn
    (0x968, 0x08befbd3, "fsub.s fs7,ft9,fa1"), // fsub.s fs7,ft9,fa1,dyn
    (0x96c, 0x09df94d3, "fsub.s fs1,ft11,ft9,rtz"), // fsub.s fs1,ft11,ft9,rtz
    (0x970, 0x08f6fb53, "fsub.s fs6,fa3,fa5"), // fsub.s fs6,fa3,fa5
    (0x974, 0x098d0f53, "fsub.s ft10,fs10,fs8,rne"), // fsub.s ft10,fs10,fs8,rne
    (0x978, 0x11f98f53, "fmul.s ft10,fs3,ft11,rne"), // fmul.s ft10,fs3,ft11,rne
    (0x97c, 0x10b9f7d3, "fmul.s fa5,fs3,fa1"), // fmul.s fa5,fs3,fa1
    (0x980, 0x10f67bd3, "fmul.s fs7,fa2,fa5"), // fmul.s fs7,fa2,fa5,dyn
    (0x984, 0x10091b53, "fmul.s fs6,fs2,ft0,rtz"), // fmul.s fs6,fs2,ft0,rtz
    (0x988, 0x11f770d3, "fmul.s ft1,fa4,ft11"), // fmul.s ft1,fa4,ft11
    (0x98c, 0x11d97053, "fmul.s ft0,fs2,ft9"), // fmul.s ft0,fs2,ft9
    (0x990, 0x184af753, "fdiv.s fa4,fs5,ft4"), // fdiv.s fa4,fs5,ft4
    (0x994, 0x19c11253, "fdiv.s ft4,ft2,ft8,rtz"), // fdiv.s ft4,ft2,ft8,rtz
    (0x998, 0x18cf7453, "fdiv.s fs0,ft10,fa2"), // fdiv.s fs0,ft10,fa2
    (0x99c, 0x181c0753, "fdiv.s fa4,fs8,ft1,rne"), // fdiv.s fa4,fs8,ft1,rne
    (0x9a0, 0x18417653, "fdiv.s fa2,ft2,ft4"), // fdiv.s fa2,ft2,ft4,dyn
    (0x9a4, 0x19b2f3d3, "fdiv.s ft7,ft5,fs11"), // fdiv.s ft7,ft5,fs11,dyn
    (0x9a8, 0x580dac53, "fsqrt.s fs8,fs11,rdn"), // fsqrt.s fs8,fs11,rdn
    (0x9ac, 0x580e4053, "fsqrt.s ft0,ft8,rmm"), // fsqrt.s ft0,ft8,rmm
    (0x9b0, 0x580785d3, "fsqrt.s fa1,fa5,rne"), // fsqrt.s fa1,fa5,rne
    (0x9b4, 0x5806f053, "fsqrt.s ft0,fa3"), // fsqrt.s ft0,fa3
    (0x9b8, 0x5805f353, "fsqrt.s ft6,fa1"), // fsqrt.s ft6,fa1,dyn
    (0x9bc, 0x5801cfd3, "fsqrt.s ft11,ft3,rmm"), // fsqrt.s ft11,ft3,rmm
    (0x9c0, 0x21520953, "fsgnj.s fs2,ft4,fs5"), // fsgnj.s fs2,ft4,fs5
    (0x9c4, 0x21e10253, "fsgnj.s ft4,ft2,ft10"), // fsgnj.s ft4,ft2,ft10
    (0x9c8, 0x203e8d53, "fsgnj.s fs10,ft9,ft3"), // fsgnj.s fs10,ft9,ft3
    (0x9cc, 0x212a07d3, "fsgnj.s fa5,fs4,fs2"), // fsgnj.s fa5,fs4,fs2
    (0x9d0, 0x204b0253, "fsgnj.s ft4,fs6,ft4"), // fsgnj.s ft4,fs6,ft4
    (0x9d4, 0x21558653, "fsgnj.s fa2,fa1,fs5"), // fsgnj.s fa2,fa1,fs5
    (0x9d8, 0x20041dd3, "fsgnjn.s fs11,fs0,ft0"), // fsgnjn.s fs11,fs0,ft0
    (0x9dc, 0x210a1b53, "fsgnjn.s fs6,fs4,fa6"), // fsgnjn.s fs6,fs4,fa6
    (0x9e0, 0x21009253, "fsgnjn.s ft4,ft1,fa6"), // fsgnjn.s ft4,ft1,fa6
    (0x9e4, 0x210d1e53, "fsgnjn.s ft8,fs10,fa6"), // fsgnjn.s ft8,fs10,fa6
    (0x9e8, 0x21dd1ad3, "fsgnjn.s fs5,fs10,ft9"), // fsgnjn.s fs5,fs10,ft9
    (0x9ec, 0x207d1e53, "fsgnjn.s ft8,fs10,ft7"), // fsgnjn.s ft8,fs10,ft7
    (0x9f0, 0x20422dd3, "fsgnjx.s fs11,ft4,ft4"), // fsgnjx.s fs11,ft4,ft4
    (0x9f4, 0x20fea053, "fsgnjx.s ft0,ft9,fa5"), // fsgnjx.s ft0,ft9,fa5
    (0x9f8, 0x205e22d3, "fsgnjx.s ft5,ft8,ft5"), // fsgnjx.s ft5,ft8,ft5
    (0x9fc, 0x2024a253, "fsgnjx.s ft4,fs1,ft2"), // fsgnjx.s ft4,fs1,ft2
    (0xa00, 0x21e0a553, "fsgnjx.s fa0,ft1,ft10"), // fsgnjx.s fa0,ft1,ft10
    (0xa04, 0x2025add3, "fsgnjx.s fs11,fa1,ft2"), // fsgnjx.s fs11,fa1,ft2
    (0xa08, 0x28a487d3, "fmin.s fa5,fs1,fa0"), // fmin.s fa5,fs1,fa0
    (0xa0c, 0x28a98f53, "fmin.s ft10,fs3,fa0"), // fmin.s ft10,fs3,fa0
    (0xa10, 0x296e8ed3, "fmin.s ft9,ft9,fs6"), // fmin.s ft9,ft9,fs6
    (0xa14, 0x29c588d3, "fmin.s fa7,fa1,ft8"), // fmin.s fa7,fa1,ft8
    (0xa18, 0x282f0853, "fmin.s fa6,ft10,ft2"), // fmin.s fa6,ft10,ft2
    (0xa1c, 0x295087d3, "fmin.s fa5,ft1,fs5"), // fmin.s fa5,ft1,fs5
    (0xa20, 0x29271853, "fmax.s fa6,fa4,fs2"), // fmax.s fa6,fa4,fs2
    (0xa24, 0x29481cd3, "fmax.s fs9,fa6,fs4"), // fmax.s fs9,fa6,fs4
    (0xa28, 0x29b59853, "fmax.s fa6,fa1,fs11"), // fmax.s fa6,fa1,fs11
    (0xa2c, 0x29099353, "fmax.s ft6,fs3,fa6"), // fmax.s ft6,fs3,fa6
    (0xa30, 0x299197d3, "fmax.s fa5,ft3,fs9"), // fmax.s fa5,ft3,fs9
    (0xa34, 0x29fa13d3, "fmax.s ft7,fs4,ft11"), // fmax.s ft7,fs4,ft11
    (0xa38, 0xc008ac53, "fcvt.w.s s8,fa7,rdn"), // fcvt.w.s s8,fa7,rdn
    (0xa3c, 0xc009f153, "fcvt.w.s sp,fs3"), // fcvt.w.s sp,fs3
    (0xa40, 0xc00b3253, "fcvt.w.s tp,fs6,rup"), // fcvt.w.s tp,fs6,rup
    (0xa44, 0xc00e77d3, "fcvt.w.s a5,ft8"), // fcvt.w.s a5,ft8,dyn
    (0xa48, 0xc00c7f53, "fcvt.w.s t5,fs8"), // fcvt.w.s t5,fs8
    (0xa4c, 0xc008a353, "fcvt.w.s t1,fa7,rdn"), // fcvt.w.s t1,fa7,rdn
    (0xa50, 0xd0037653, "fcvt.s.w fa2,t1"), // fcvt.s.w fa2,t1
    (0xa54, 0xd0054ad3, "fcvt.s.w fs5,a0,rmm"), // fcvt.s.w fs5,a0,rmm
    (0xa58, 0xd0038153, "fcvt.s.w ft2,t2,rne"), // fcvt.s.w ft2,t2,rne
    (0xa5c, 0xd00578d3, "fcvt.s.w fa7,a0"), // fcvt.s.w fa7,a0,dyn
    (0xa60, 0xd00d7253, "fcvt.s.w ft4,s10"), // fcvt.s.w ft4,s10,dyn
    (0xa64, 0xd008cf53, "fcvt.s.w ft10,a7,rmm"), // fcvt.s.w ft10,a7,rmm
    (0xa68, 0xc0190c53, "fcvt.wu.s s8,fs2,rne"), // fcvt.wu.s s8,fs2,rne
    (0xa6c, 0xc0117953, "fcvt.wu.s s2,ft2"), // fcvt.wu.s s2,ft2,dyn
    (0xa70, 0xc01eb853, "fcvt.wu.s a6,ft9,rup"), // fcvt.wu.s a6,ft9,rup
    (0xa74, 0xc01bfa53, "fcvt.wu.s s4,fs7"), // fcvt.wu.s s4,fs7
    (0xa78, 0xc019fe53, "fcvt.wu.s t3,fs3"), // fcvt.wu.s t3,fs3
    (0xa7c, 0xc019ca53, "fcvt.wu.s s4,fs3,rmm"), // fcvt.wu.s s4,fs3,rmm
    (0xa80, 0xd016a2d3, "fcvt.s.wu ft5,a3,rdn"), // fcvt.s.wu ft5,a3,rdn
    (0xa84, 0xd015b253, "fcvt.s.wu ft4,a1,rup"), // fcvt.s.wu ft4,a1,rup
    (0xa88, 0xd01a2053, "fcvt.s.wu ft0,s4,rdn"), // fcvt.s.wu ft0,s4,rdn
    (0xa8c, 0xd019b9d3, "fcvt.s.wu fs3,s3,rup"), // fcvt.s.wu fs3,s3,rup
    (0xa90, 0xd01aa0d3, "fcvt.s.wu ft1,s5,rdn"), // fcvt.s.wu ft1,s5,rdn
    (0xa94, 0xd01626d3, "fcvt.s.wu fa3,a2,rdn"), // fcvt.s.wu fa3,a2,rdn
    (0xa98, 0xc0224d53, "fcvt.l.s s10,ft4,rmm"), // fcvt.l.s s10,ft4,rmm
    (0xa9c, 0xc0220fd3, "fcvt.l.s t6,ft4,rne"), // fcvt.l.s t6,ft4,rne
    (0xaa0, 0xc029ad53, "fcvt.l.s s10,fs3,rdn"), // fcvt.l.s s10,fs3,rdn
    (0xaa4, 0xc02126d3, "fcvt.l.s a3,ft2,rdn"), // fcvt.l.s a3,ft2,rdn
    (0xaa8, 0xc022c0d3, "fcvt.l.s ra,ft5,rmm"), // fcvt.l.s ra,ft5,rmm
    (0xaac, 0xc02dbcd3, "fcvt.l.s s9,fs11,rup"), // fcvt.l.s s9,fs11,rup
    (0xab0, 0xd0252ad3, "fcvt.s.l fs5,a0,rdn"), // fcvt.s.l fs5,a0,rdn
    (0xab4, 0xd027fa53, "fcvt.s.l fs4,a5"), // fcvt.s.l fs4,a5,dyn
    (0xab8, 0xd02afa53, "fcvt.s.l fs4,s5"), // fcvt.s.l fs4,s5
    (0xabc, 0xd0229253, "fcvt.s.l ft4,t0,rtz"), // fcvt.s.l ft4,t0,rtz
    (0xac0, 0xd0291253, "fcvt.s.l ft4,s2,rtz"), // fcvt.s.l ft4,s2,rtz
    (0xac4, 0xd0210f53, "fcvt.s.l ft10,sp,rne"), // fcvt.s.l ft10,sp,rne
    (0xac8, 0xc03b86d3, "fcvt.lu.s a3,fs7,rne"), // fcvt.lu.s a3,fs7,rne
    (0xacc, 0xc03176d3, "fcvt.lu.s a3,ft2"), // fcvt.lu.s a3,ft2,dyn
    (0xad0, 0xc03e8453, "fcvt.lu.s s0,ft9,rne"), // fcvt.lu.s s0,ft9,rne
    (0xad4, 0xc03c2f53, "fcvt.lu.s t5,fs8,rdn"), // fcvt.lu.s t5,fs8,rdn
    (0xad8, 0xc0357ad3, "fcvt.lu.s s5,fa0"), // fcvt.lu.s s5,fa0
    (0xadc, 0xc03bfed3, "fcvt.lu.s t4,fs7"), // fcvt.lu.s t4,fs7,dyn
    (0xae0, 0xd03147d3, "fcvt.s.lu fa5,sp,rmm"), // fcvt.s.lu fa5,sp,rmm
    (0xae4, 0xd0360653, "fcvt.s.lu fa2,a2,rne"), // fcvt.s.lu fa2,a2,rne
    (0xae8, 0xd03eacd3, "fcvt.s.lu fs9,t4,rdn"), // fcvt.s.lu fs9,t4,rdn
    (0xaec, 0xd03049d3, "fcvt.s.lu fs3,zero,rmm"), // fcvt.s.lu fs3,zero,rmm
    (0xaf0, 0xd03d7753, "fcvt.s.lu fa4,s10"), // fcvt.s.lu fa4,s10,dyn
    (0xaf4, 0xd039c853, "fcvt.s.lu fa6,s3,rmm"), // fcvt.s.lu fa6,s3,rmm
    (0xaf8, 0xa1f3a753, "feq.s a4,ft7,ft11"), // feq.s a4,ft7,ft11
    (0xafc, 0xa0dfaad3, "feq.s s5,ft11,fa3"), // feq.s s5,ft11,fa3
    (0xb00, 0xa16724d3, "feq.s s1,fa4,fs6"), // feq.s s1,fa4,fs6
    (0xb04, 0xa03f2053, "feq.s zero,ft10,ft3"), // feq.s zero,ft10,ft3
    (0xb08, 0xa1e6ac53, "feq.s s8,fa3,ft10"), // feq.s s8,fa3,ft10
    (0xb0c, 0xa0f32ed3, "feq.s t4,ft6,fa5"), // feq.s t4,ft6,fa5
    (0xb10, 0xa1a89bd3, "flt.s s7,fa7,fs10"), // flt.s s7,fa7,fs10
    (0xb14, 0xa00891d3, "flt.s gp,fa7,ft0"), // flt.s gp,fa7,ft0
    (0xb18, 0xa0511dd3, "flt.s s11,ft2,ft5"), // flt.s s11,ft2,ft5
    (0xb1c, 0xa1b59753, "flt.s a4,fa1,fs11"), // flt.s a4,fa1,fs11
    (0xb20, 0xa0f610d3, "flt.s ra,fa2,fa5"), // flt.s ra,fa2,fa5
    (0xb24, 0xa08091d3, "flt.s gp,ft1,fs0"), // flt.s gp,ft1,fs0
    (0xb28, 0xa14587d3, "fle.s a5,fa1,fs4"), // fle.s a5,fa1,fs4
    (0xb2c, 0xa1b50bd3, "fle.s s7,fa0,fs11"), // fle.s s7,fa0,fs11
    (0xb30, 0xa01b01d3, "fle.s gp,fs6,ft1"), // fle.s gp,fs6,ft1
    (0xb34, 0xa0b285d3, "fle.s a1,ft5,fa1"), // fle.s a1,ft5,fa1
    (0xb38, 0xa1128153, "fle.s sp,ft5,fa7"), // fle.s sp,ft5,fa7
    (0xb3c, 0xa12b01d3, "fle.s gp,fs6,fs2"), // fle.s gp,fs6,fs2
    (0xb40, 0xe0071553, "fclass.s a0,fa4"), // fclass.s a0,fa4
    (0xb44, 0xe0049753, "fclass.s a4,fs1"), // fclass.s a4,fs1
    (0xb48, 0xe00b13d3, "fclass.s t2,fs6"), // fclass.s t2,fs6
    (0xb4c, 0xe0089853, "fclass.s a6,fa7"), // fclass.s a6,fa7
    (0xb50, 0xe0011a53, "fclass.s s4,ft2"), // fclass.s s4,ft2
    (0xb54, 0xe00b1753, "fclass.s a4,fs6"), // fclass.s a4,fs6
    (0xb58, 0xe00f8c53, "fmv.x.w s8,ft11"), // fmv.x.w s8,ft11
    (0xb5c, 0xe0020bd3, "fmv.x.w s7,ft4"), // fmv.x.w s7,ft4
    (0xb60, 0xe0010c53, "fmv.x.w s8,ft2"), // fmv.x.w s8,ft2
    (0xb64, 0xe0058f53, "fmv.x.w t5,fa1"), // fmv.x.w t5,fa1
    (0xb68, 0xe0078ed3, "fmv.x.w t4,fa5"), // fmv.x.w t4,fa5
    (0xb6c, 0xe00e05d3, "fmv.x.w a1,ft8"), // fmv.x.w a1,ft8
    (0xb70, 0xf0070bd3, "fmv.w.x fs7,a4"), // fmv.w.x fs7,a4
    (0xb74, 0xf0058f53, "fmv.w.x ft10,a1"), // fmv.w.x ft10,a1
    (0xb78, 0xf0028453, "fmv.w.x fs0,t0"), // fmv.w.x fs0,t0
    (0xb7c, 0xf00084d3, "fmv.w.x fs1,ra"), // fmv.w.x fs1,ra
    (0xb80, 0xf0028153, "fmv.w.x ft2,t0"), // fmv.w.x ft2,t0
    (0xb84, 0xf00e0c53, "fmv.w.x fs8,t3"), // fmv.w.x fs8,t3
    (0xb88, 0xfff9b907, "fld fs2,-1(s3)"), // fld fs2,-1(s3)
    (0xb8c, 0x34993b87, "fld fs7,841(s2)"), // fld fs7,841(s2)
    (0xb90, 0x000a3f87, "fld ft11,0(s4)"), // fld ft11,0(s4)
    (0xb94, 0x7ffc3087, "fld ft1,2047(s8)"), // fld ft1,2047(s8)
    (0xb98, 0x80073587, "fld fa1,-2048(a4)"), // fld fa1,-2048(a4)
    (0xb9c, 0x00093487, "fld fs1,0(s2)"), // fld fs1,0(s2)
    (0xba0, 0x88233fa7, "fsd ft2,-1889(t1)"), // fsd ft2,-1889(t1)
    (0xba4, 0x004537a7, "fsd ft4,15(a0)"), // fsd ft4,15(a0)
    (0xba8, 0x007eb027, "fsd ft7,0(t4)"), // fsd ft7,0(t4)
    (0xbac, 0xfe33b5a7, "fsd ft3,-21(t2)"), // fsd ft3,-21(t2)
    (0xbb0, 0x4f183527, "fsd fa7,1258(a6)"), // fsd fa7,1258(a6)
    (0xbb4, 0x7e723fa7, "fsd ft7,2047(tp)"), // fsd ft7,2047(tp)
    (0xbb8, 0x82f68c43, "fmadd.d fs8,fa3,fa5,fa6,rne"), // fmadd.d fs8,fa3,fa5,fa6,rne
    (0xbbc, 0x32ada843, "fmadd.d fa6,fs11,fa0,ft6,rdn"), // fmadd.d fa6,fs11,fa0,ft6,rdn
    (0xbc0, 0x7be2fb43, "fmadd.d fs6,ft5,ft10,fa5"), // fmadd.d fs6,ft5,ft10,fa5
    (0xbc4, 0x0b7d25c3, "fmadd.d fa1,fs10,fs7,ft1,rdn"), // fmadd.d fa1,fs10,fs7,ft1,rdn
    (0xbc8, 0x6a6f9843, "fmadd.d fa6,ft11,ft6,fa3,rtz"), // fmadd.d fa6,ft11,ft6,fa3,rtz
    (0xbcc, 0xba66f8c3, "fmadd.d fa7,fa3,ft6,fs7"), // fmadd.d fa7,fa3,ft6,fs7
    (0xbd0, 0x2202f6c7, "fmsub.d fa3,ft5,ft0,ft4"), // fmsub.d fa3,ft5,ft0,ft4,dyn
    (0xbd4, 0x929e04c7, "fmsub.d fs1,ft8,fs1,fs2,rne"), // fmsub.d fs1,ft8,fs1,fs2,rne
    (0xbd8, 0x4b578147, "fmsub.d ft2,fa5,fs5,fs1,rne"), // fmsub.d ft2,fa5,fs5,fs1,rne
    (0xbdc, 0xe2c30647, "fmsub.d fa2,ft6,fa2,ft8,rne"), // fmsub.d fa2,ft6,fa2,ft8,rne
    (0xbe0, 0xcbe8c147, "fmsub.d ft2,fa7,ft10,fs9,rmm"), // fmsub.d ft2,fa7,ft10,fs9,rmm
    (0xbe4, 0x3321b8c7, "fmsub.d fa7,ft3,fs2,ft6,rup"), // fmsub.d fa7,ft3,fs2,ft6,rup
    (0xbe8, 0x6a6900cb, "fnmsub.d ft1,fs2,ft6,fa3,rne"), // fnmsub.d ft1,fs2,ft6,fa3,rne
    (0xbec, 0x4a5a95cb, "fnmsub.d fa1,fs5,ft5,fs1,rtz"), // fnmsub.d fa1,fs5,ft5,fs1,rtz
    (0xbf0, 0x82b8bacb, "fnmsub.d fs5,fa7,fa1,fa6,rup"), // fnmsub.d fs5,fa7,fa1,fa6,rup
    (0xbf4, 0xc20bfacb, "fnmsub.d fs5,fs7,ft0,fs8"), // fnmsub.d fs5,fs7,ft0,fs8
    (0xbf8, 0x22f71fcb, "fnmsub.d ft11,fa4,fa5,ft4,rtz"), // fnmsub.d ft11,fa4,fa5,ft4,rtz
    (0xbfc, 0x3a2c3c4b, "fnmsub.d fs8,fs8,ft2,ft7,rup"), // fnmsub.d fs8,fs8,ft2,ft7,rup
    (0xc00, 0x82aef44f, "fnmadd.d fs0,ft9,fa0,fa6"), // fnmadd.d fs0,ft9,fa0,fa6,dyn
    (0xc04, 0x5af2bccf, "fnmadd.d fs9,ft5,fa5,fa1,rup"), // fnmadd.d fs9,ft5,fa5,fa1,rup
    (0xc08, 0xfb18cb4f, "fnmadd.d fs6,fa7,fa7,ft11,rmm"), // fnmadd.d fs6,fa7,fa7,ft11,rmm
    (0xc0c, 0x527571cf, "fnmadd.d ft3,fa0,ft7,fa0"), // fnmadd.d ft3,fa0,ft7,fa0,dyn
    (0xc10, 0x8233cacf, "fnmadd.d fs5,ft7,ft3,fa6,rmm"), // fnmadd.d fs5,ft7,ft3,fa6,rmm
    (0xc14, 0x6b917b4f, "fnmadd.d fs6,ft2,fs9,fa3"), // fnmadd.d fs6,ft2,fs9,fa3
    (0xc18, 0x028b86d3, "fadd.d fa3,fs7,fs0,rne"), // fadd.d fa3,fs7,fs0,rne
    (0xc1c, 0x02302153, "fadd.d ft2,ft0,ft3,rdn"), // fadd.d ft2,ft0,ft3,rdn
    (0xc20, 0x02fffe53, "fadd.d ft8,ft11,fa5"), // fadd.d ft8,ft11,fa5,dyn
    (0xc24, 0x03fb2553, "fadd.d fa0,fs6,ft11,rdn"), // fadd.d fa0,fs6,ft11,rdn
    (0xc28, 0x0389a153, "fadd.d ft2,fs3,fs8,rdn"), // fadd.d ft2,fs3,fs8,rdn
    (0xc2c, 0x022e9653, "fadd.d fa2,ft9,ft2,rtz"), // fadd.d fa2,ft9,ft2,rtz
    (0xc30, 0x0a6facd3, "fsub.d fs9,ft11,ft6,rdn"), // fsub.d fs9,ft11,ft6,rdn
    (0xc34, 0x0a2b7ed3, "fsub.d ft9,fs6,ft2"), // fsub.d ft9,fs6,ft2,dyn
    (0xc38, 0x0b131ad3, "fsub.d fs5,ft6,fa7,rtz"), // fsub.d fs5,ft6,fa7,rtz
    (0xc3c, 0x0b6eaa53, "fsub.d fs4,ft9,fs6,rdn"), // fsub.d fs4,ft9,fs6,rdn
    (0xc40, 0x0b1472d3, "fsub.d ft5,fs0,fa7"), // fsub.d ft5,fs0,fa7
    (0xc44, 0x0ac54153, "fsub.d ft2,fa0,fa2,rmm"), // fsub.d ft2,fa0,fa2,rmm
    (0xc48, 0x13ef3e53, "fmul.d ft8,ft10,ft10,rup"), // fmul.d ft8,ft10,ft10,rup
    (0xc4c, 0x13cb46d3, "fmul.d fa3,fs6,ft8,rmm"), // fmul.d fa3,fs6,ft8,rmm
    (0xc50, 0x12137953, "fmul.d fs2,ft6,ft1"), // fmul.d fs2,ft6,ft1
    (0xc54, 0x135a7fd3, "fmul.d ft11,fs4,fs5"), // fmul.d ft11,fs4,fs5
    (0xc58, 0x12ee1653, "fmul.d fa2,ft8,fa4,rtz"), // fmul.d fa2,ft8,fa4,rtz
    (0xc5c, 0x12967c53, "fmul.d fs8,fa2,fs1"), // fmul.d fs8,fa2,fs1,dyn
    (0xc60, 0x1ad6abd3, "fdiv.d fs7,fa3,fa3,rdn"), // fdiv.d fs7,fa3,fa3,rdn
    (0xc64, 0x1be5f4d3, "fdiv.d fs1,fa1,ft10"), // fdiv.d fs1,fa1,ft10,dyn
    (0xc68, 0x1a8536d3, "fdiv.d fa3,fa0,fs0,rup"), // fdiv.d fa3,fa0,fs0,rup
    (0xc6c, 0x1a0b08d3, "fdiv.d fa7,fs6,ft0,rne"), // fdiv.d fa7,fs6,ft0,rne
    (0xc70, 0x1b5a9453, "fdiv.d fs0,fs5,fs5,rtz"), // fdiv.d fs0,fs5,fs5,rtz
    (0xc74, 0x1a44f653, "fdiv.d fa2,fs1,ft4"), // fdiv.d fa2,fs1,ft4
    (0xc78, 0x5a0843d3, "fsqrt.d ft7,fa6,rmm"), // fsqrt.d ft7,fa6,rmm
    (0xc7c, 0x5a0e2f53, "fsqrt.d ft10,ft8,rdn"), // fsqrt.d ft10,ft8,rdn
    (0xc80, 0x5a027a53, "fsqrt.d fs4,ft4"), // fsqrt.d fs4,ft4
    (0xc84, 0x5a063453, "fsqrt.d fs0,fa2,rup"), // fsqrt.d fs0,fa2,rup
    (0xc88, 0x5a00cf53, "fsqrt.d ft10,ft1,rmm"), // fsqrt.d ft10,ft1,rmm
    (0xc8c, 0x5a0877d3, "fsqrt.d fa5,fa6"), // fsqrt.d fa5,fa6
    (0xc90, 0x22a40853, "fsgnj.d fa6,fs0,fa0"), // fsgnj.d fa6,fs0,fa0
    (0xc94, 0x235504d3, "fsgnj.d fs1,fa0,fs5"), // fsgnj.d fs1,fa0,fs5
    (0xc98, 0x233708d3, "fsgnj.d fa7,fa4,fs3"), // fsgnj.d fa7,fa4,fs3
    (0xc9c, 0x22ec88d3, "fsgnj.d fa7,fs9,fa4"), // fsgnj.d fa7,fs9,fa4
    (0xca0, 0x23028053, "fsgnj.d ft0,ft5,fa6"), // fsgnj.d ft0,ft5,fa6
    (0xca4, 0x23480f53, "fsgnj.d ft10,fa6,fs4"), // fsgnj.d ft10,fa6,fs4
    (0xca8, 0x22641153, "fsgnjn.d ft2,fs0,ft6"), // fsgnjn.d ft2,fs0,ft6
    (0xcac, 0x22679ed3, "fsgnjn.d ft9,fa5,ft6"), // fsgnjn.d ft9,fa5,ft6
    (0xcb0, 0x22841053, "fsgnjn.d ft0,fs0,fs0"), // fsgnjn.d ft0,fs0,fs0
    (0xcb4, 0x230f1953, "fsgnjn.d fs2,ft10,fa6"), // fsgnjn.d fs2,ft10,fa6
    (0xcb8, 0x22e01153, "fsgnjn.d ft2,ft0,fa4"), // fsgnjn.d ft2,ft0,fa4
    (0xcbc, 0x239c1353, "fsgnjn.d ft6,fs8,fs9"), // fsgnjn.d ft6,fs8,fs9
    (0xcc0, 0x22dca353, "fsgnjx.d ft6,fs9,fa3"), // fsgnjx.d ft6,fs9,fa3
    (0xcc4, 0x22daaa53, "fsgnjx.d fs4,fs5,fa3"), // fsgnjx.d fs4,fs5,fa3
    (0xcc8, 0x239ca353, "fsgnjx.d ft6,fs9,fs9"), // fsgnjx.d ft6,fs9,fs9
    (0xccc, 0x239f2ad3, "fsgnjx.d fs5,ft10,fs9"), // fsgnjx.d fs5,ft10,fs9
    (0xcd0, 0x2391a153, "fsgnjx.d ft2,ft3,fs9"), // fsgnjx.d ft2,ft3,fs9
    (0xcd4, 0x237d2c53, "fsgnjx.d fs8,fs10,fs7"), // fsgnjx.d fs8,fs10,fs7
    (0xcd8, 0x2bc98cd3, "fmin.d fs9,fs3,ft8"), // fmin.d fs9,fs3,ft8
    (0xcdc, 0x2b1685d3, "fmin.d fa1,fa3,fa7"), // fmin.d fa1,fa3,fa7
    (0xce0, 0x2adc8b53, "fmin.d fs6,fs9,fa3"), // fmin.d fs6,fs9,fa3
    (0xce4, 0x2ae90a53, "fmin.d fs4,fs2,fa4"), // fmin.d fs4,fs2,fa4
    (0xce8, 0x2aa80cd3, "fmin.d fs9,fa6,fa0"), // fmin.d fs9,fa6,fa0
    (0xcec, 0x2b8508d3, "fmin.d fa7,fa0,fs8"), // fmin.d fa7,fa0,fs8
    (0xcf0, 0x2b021553, "fmax.d fa0,ft4,fa6"), // fmax.d fa0,ft4,fa6
    (0xcf4, 0x2bbc1253, "fmax.d ft4,fs8,fs11"), // fmax.d ft4,fs8,fs11
    (0xcf8, 0x2aab94d3, "fmax.d fs1,fs7,fa0"), // fmax.d fs1,fs7,fa0
    (0xcfc, 0x2adb9453, "fmax.d fs0,fs7,fa3"), // fmax.d fs0,fs7,fa3
    (0xd00, 0x2aa09353, "fmax.d ft6,ft1,fa0"), // fmax.d ft6,ft1,fa0
    (0xd04, 0x2b6b15d3, "fmax.d fa1,fs6,fs6"), // fmax.d fa1,fs6,fs6
    (0xd08, 0xc20b7bd3, "fcvt.w.d s7,fs6"), // fcvt.w.d s7,fs6,dyn
    (0xd0c, 0xc208c153, "fcvt.w.d sp,fa7,rmm"), // fcvt.w.d sp,fa7,rmm
    (0xd10, 0xc200f153, "fcvt.w.d sp,ft1"), // fcvt.w.d sp,ft1
    (0xd14, 0xc2017353, "fcvt.w.d t1,ft2"), // fcvt.w.d t1,ft2,dyn
    (0xd18, 0xc2090753, "fcvt.w.d a4,fs2,rne"), // fcvt.w.d a4,fs2,rne
    (0xd1c, 0xc2013e53, "fcvt.w.d t3,ft2,rup"), // fcvt.w.d t3,ft2,rup
    (0xd20, 0xd2008d53, "fcvt.d.w fs10,ra"), // fcvt.d.w fs10,ra
    (0xd24, 0xd20409d3, "fcvt.d.w fs3,s0"), // fcvt.d.w fs3,s0
    (0xd28, 0xd2098b53, "fcvt.d.w fs6,s3"), // fcvt.d.w fs6,s3
    (0xd2c, 0xd20e0453, "fcvt.d.w fs0,t3"), // fcvt.d.w fs0,t3
    (0xd30, 0xd20e8053, "fcvt.d.w ft0,t4"), // fcvt.d.w ft0,t4
    (0xd34, 0xc21f7fd3, "fcvt.wu.d t6,ft10"), // fcvt.wu.d t6,ft10
    (0xd38, 0xc21f8e53, "fcvt.wu.d t3,ft11,rne"), // fcvt.wu.d t3,ft11,rne
    (0xd3c, 0xc2167fd3, "fcvt.wu.d t6,fa2"), // fcvt.wu.d t6,fa2
    (0xd40, 0xc21c75d3, "fcvt.wu.d a1,fs8"), // fcvt.wu.d a1,fs8
    (0xd44, 0xc21e7553, "fcvt.wu.d a0,ft8"), // fcvt.wu.d a0,ft8,dyn
    (0xd48, 0xc2169bd3, "fcvt.wu.d s7,fa3,rtz"), // fcvt.wu.d s7,fa3,rtz
    (0xd4c, 0xd21505d3, "fcvt.d.wu fa1,a0"), // fcvt.d.wu fa1,a0
    (0xd50, 0xd21f0d53, "fcvt.d.wu fs10,t5"), // fcvt.d.wu fs10,t5
    (0xd54, 0xd21e0ed3, "fcvt.d.wu ft9,t3"), // fcvt.d.wu ft9,t3
    (0xd58, 0xd2198c53, "fcvt.d.wu fs8,s3"), // fcvt.d.wu fs8,s3
    (0xd5c, 0xd21881d3, "fcvt.d.wu ft3,a7"), // fcvt.d.wu ft3,a7
    (0xd60, 0xd21908d3, "fcvt.d.wu fa7,s2"), // fcvt.d.wu fa7,s2
    (0xd64, 0xc22938d3, "fcvt.l.d a7,fs2,rup"), // fcvt.l.d a7,fs2,rup
    (0xd68, 0xc221f753, "fcvt.l.d a4,ft3"), // fcvt.l.d a4,ft3
    (0xd6c, 0xc220a753, "fcvt.l.d a4,ft1,rdn"), // fcvt.l.d a4,ft1,rdn
    (0xd70, 0xc22f7d53, "fcvt.l.d s10,ft10"), // fcvt.l.d s10,ft10
    (0xd74, 0xc22daf53, "fcvt.l.d t5,fs11,rdn"), // fcvt.l.d t5,fs11,rdn
    (0xd78, 0xc22f72d3, "fcvt.l.d t0,ft10"), // fcvt.l.d t0,ft10,dyn
    (0xd7c, 0xd22c76d3, "fcvt.d.l fa3,s8"), // fcvt.d.l fa3,s8
    (0xd80, 0xd22a0253, "fcvt.d.l ft4,s4,rne"), // fcvt.d.l ft4,s4,rne
    (0xd84, 0xd22773d3, "fcvt.d.l ft7,a4"), // fcvt.d.l ft7,a4,dyn
    (0xd88, 0xd2237153, "fcvt.d.l ft2,t1"), // fcvt.d.l ft2,t1,dyn
    (0xd8c, 0xd224fdd3, "fcvt.d.l fs11,s1"), // fcvt.d.l fs11,s1,dyn
    (0xd90, 0xd2261fd3, "fcvt.d.l ft11,a2,rtz"), // fcvt.d.l ft11,a2,rtz
    (0xd94, 0xc23e1c53, "fcvt.lu.d s8,ft8,rtz"), // fcvt.lu.d s8,ft8,rtz
    (0xd98, 0xc23bf0d3, "fcvt.lu.d ra,fs7"), // fcvt.lu.d ra,fs7
    (0xd9c, 0xc23396d3, "fcvt.lu.d a3,ft7,rtz"), // fcvt.lu.d a3,ft7,rtz
    (0xda0, 0xc23d47d3, "fcvt.lu.d a5,fs10,rmm"), // fcvt.lu.d a5,fs10,rmm
    (0xda4, 0xc2304a53, "fcvt.lu.d s4,ft0,rmm"), // fcvt.lu.d s4,ft0,rmm
    (0xda8, 0xc2307053, "fcvt.lu.d zero,ft0"), // fcvt.lu.d zero,ft0
    (0xdac, 0xd23bc3d3, "fcvt.d.lu ft7,s7,rmm"), // fcvt.d.lu ft7,s7,rmm
    (0xdb0, 0xd231a1d3, "fcvt.d.lu ft3,gp,rdn"), // fcvt.d.lu ft3,gp,rdn
    (0xdb4, 0xd2391c53, "fcvt.d.lu fs8,s2,rtz"), // fcvt.d.lu fs8,s2,rtz
    (0xdb8, 0xd23049d3, "fcvt.d.lu fs3,zero,rmm"), // fcvt.d.lu fs3,zero,rmm
    (0xdbc, 0xd2347853, "fcvt.d.lu fa6,s0"), // fcvt.d.lu fa6,s0
    (0xdc0, 0xd232bd53, "fcvt.d.lu fs10,t0,rup"), // fcvt.d.lu fs10,t0,rup
    (0xdc4, 0xa21b2c53, "feq.d s8,fs6,ft1"), // feq.d s8,fs6,ft1
    (0xdc8, 0xa283af53, "feq.d t5,ft7,fs0"), // feq.d t5,ft7,fs0
    (0xdcc, 0xa3f428d3, "feq.d a7,fs0,ft11"), // feq.d a7,fs0,ft11
    (0xdd0, 0xa2d22953, "feq.d s2,ft4,fa3"), // feq.d s2,ft4,fa3
    (0xdd4, 0xa2192ad3, "feq.d s5,fs2,ft1"), // feq.d s5,fs2,ft1
    (0xdd8, 0xa2ef2453, "feq.d s0,ft10,fa4"), // feq.d s0,ft10,fa4
    (0xddc, 0xa2be96d3, "flt.d a3,ft9,fa1"), // flt.d a3,ft9,fa1
    (0xde0, 0xa2fd1953, "flt.d s2,fs10,fa5"), // flt.d s2,fs10,fa5
    (0xde4, 0xa2a39d53, "flt.d s10,ft7,fa0"), // flt.d s10,ft7,fa0
    (0xde8, 0xa30c96d3, "flt.d a3,fs9,fa6"), // flt.d a3,fs9,fa6
    (0xdec, 0xa2161e53, "flt.d t3,fa2,ft1"), // flt.d t3,fa2,ft1
    (0xdf0, 0xa2a01653, "flt.d a2,ft0,fa0"), // flt.d a2,ft0,fa0
    (0xdf4, 0xa2bc09d3, "fle.d s3,fs8,fa1"), // fle.d s3,fs8,fa1
    (0xdf8, 0xa23f8053, "fle.d zero,ft11,ft3"), // fle.d zero,ft11,ft3
    (0xdfc, 0xa24c01d3, "fle.d gp,fs8,ft4"), // fle.d gp,fs8,ft4
    (0xe00, 0xa35688d3, "fle.d a7,fa3,fs5"), // fle.d a7,fa3,fs5
    (0xe04, 0xa3ca8853, "fle.d a6,fs5,ft8"), // fle.d a6,fs5,ft8
    (0xe08, 0xa2c20f53, "fle.d t5,ft4,fa2"), // fle.d t5,ft4,fa2
    (0xe0c, 0xe20f1753, "fclass.d a4,ft10"), // fclass.d a4,ft10
    (0xe10, 0xe2081c53, "fclass.d s8,fa6"), // fclass.d s8,fa6
    (0xe14, 0xe2069b53, "fclass.d s6,fa3"), // fclass.d s6,fa3
    (0xe18, 0xe20c15d3, "fclass.d a1,fs8"), // fclass.d a1,fs8
    (0xe1c, 0xe20f9a53, "fclass.d s4,ft11"), // fclass.d s4,ft11
    (0xe20, 0xe2071bd3, "fclass.d s7,fa4"), // fclass.d s7,fa4
    (0xe24, 0xe2058cd3, "fmv.x.d s9,fa1"), // fmv.x.d s9,fa1
    (0xe28, 0xe20a84d3, "fmv.x.d s1,fs5"), // fmv.x.d s1,fs5
    (0xe2c, 0xe20f8bd3, "fmv.x.d s7,ft11"), // fmv.x.d s7,ft11
    (0xe30, 0xe20685d3, "fmv.x.d a1,fa3"), // fmv.x.d a1,fa3
    (0xe34, 0xe2068353, "fmv.x.d t1,fa3"), // fmv.x.d t1,fa3
    (0xe38, 0xe20f8053, "fmv.x.d zero,ft11"), // fmv.x.d zero,ft11
    (0xe3c, 0xf20b0c53, "fmv.d.x fs8,s6"), // fmv.d.x fs8,s6
    (0xe40, 0xf2050fd3, "fmv.d.x ft11,a0"), // fmv.d.x ft11,a0
    (0xe44, 0xf2088053, "fmv.d.x ft0,a7"), // fmv.d.x ft0,a7
    (0xe48, 0xf20a8353, "fmv.d.x ft6,s5"), // fmv.d.x ft6,s5
    (0xe4c, 0xf2010253, "fmv.d.x ft4,sp"), // fmv.d.x ft4,sp
    (0xe50, 0xf2058dd3, "fmv.d.x fs11,a1"), // fmv.d.x fs11,a1
    (0xe54, 0x40160e53, "fcvt.s.d ft8,fa2,rne"), // fcvt.s.d ft8,fa2,rne
    (0xe58, 0x4015c153, "fcvt.s.d ft2,fa1,rmm"), // fcvt.s.d ft2,fa1,rmm
    (0xe5c, 0x4011b7d3, "fcvt.s.d fa5,ft3,rup"), // fcvt.s.d fa5,ft3,rup
    (0xe60, 0x40101ad3, "fcvt.s.d fs5,ft0,rtz"), // fcvt.s.d fs5,ft0,rtz
    (0xe64, 0x40107dd3, "fcvt.s.d fs11,ft0"), // fcvt.s.d fs11,ft0
    (0xe68, 0x4019f053, "fcvt.s.d ft0,fs3"), // fcvt.s.d ft0,fs3,dyn
    (0xe6c, 0x420c0453, "fcvt.d.s fs0,fs8"), // fcvt.d.s fs0,fs8
    (0xe70, 0x420188d3, "fcvt.d.s fa7,ft3"), // fcvt.d.s fa7,ft3
    (0xe74, 0x420684d3, "fcvt.d.s fs1,fa3"), // fcvt.d.s fs1,fa3
    (0xe78, 0x420f8a53, "fcvt.d.s fs4,ft11"), // fcvt.d.s fs4,ft11
    (0xe7c, 0x420787d3, "fcvt.d.s fa5,fa5"), // fcvt.d.s fa5,fa5
    (0xe80, 0x420d8753, "fcvt.d.s fa4,fs11"), // fcvt.d.s fa4,fs11
    (0xe84, 0x0010a00f, "cbo.clean (ra)"), // cbo.clean (ra)
    (0xe88, 0x0018a00f, "cbo.clean (a7)"), // cbo.clean (a7)
    (0xe8c, 0x0014200f, "cbo.clean (s0)"), // cbo.clean (s0)
    (0xe90, 0x0010200f, "cbo.clean (zero)"), // cbo.clean (zero)
    (0xe94, 0x0011a00f, "cbo.clean (gp)"), // cbo.clean (gp)
    (0xe98, 0x0021200f, "cbo.flush (sp)"), // cbo.flush (sp)
    (0xe9c, 0x002ba00f, "cbo.flush (s7)"), // cbo.flush (s7)
    (0xea0, 0x0021a00f, "cbo.flush (gp)"), // cbo.flush (gp)
    (0xea4, 0x0029200f, "cbo.flush (s2)"), // cbo.flush (s2)
    (0xea8, 0x0026200f, "cbo.flush (a2)"), // cbo.flush (a2)
    (0xeac, 0x002aa00f, "cbo.flush (s5)"), // cbo.flush (s5)
    (0xeb0, 0x0008a00f, "cbo.inval (a7)"), // cbo.inval (a7)
    (0xeb4, 0x0008200f, "cbo.inval (a6)"), // cbo.inval (a6)
    (0xeb8, 0x0000a00f, "cbo.inval (ra)"), // cbo.inval (ra)
    (0xebc, 0x000b200f, "cbo.inval (s6)"), // cbo.inval (s6)
    (0xec0, 0x0006200f, "cbo.inval (a2)"), // cbo.inval (a2)
    (0xec4, 0x0047200f, "cbo.zero (a4)"), // cbo.zero (a4)
    (0xec8, 0x0049200f, "cbo.zero (s2)"), // cbo.zero (s2)
    (0xecc, 0x0040200f, "cbo.zero (zero)"), // cbo.zero (zero)
    (0xed0, 0x004f200f, "cbo.zero (t5)"), // cbo.zero (t5)
    (0xed4, 0x0040a00f, "cbo.zero (ra)"), // cbo.zero (ra)
];

/// `(half, equivalent word, pc of the equivalent, objdump text of the
/// equivalent)` for compressed instructions.
#[rustfmt::skip]
pub(crate) const RVC: &[(u16, u32, u64, &str)] = &[
    (0x1c00, 0x23010413, 0x0, "addi s0,sp,560"), // c.addi4spn s0,sp,560
    (0x14a8, 0x26810513, 0x4, "addi a0,sp,616"), // c.addi4spn a0,sp,616
    (0x1a74, 0x13c10693, 0x8, "addi a3,sp,316"), // c.addi4spn a3,sp,316
    (0x1b8c, 0x1f010593, 0xc, "addi a1,sp,496"), // c.addi4spn a1,sp,496
    (0x0bd0, 0x1d410613, 0x10, "addi a2,sp,468"), // c.addi4spn a2,sp,468
    (0x0a30, 0x11810613, 0x14, "addi a2,sp,280"), // c.addi4spn a2,sp,280
    (0x24d4, 0x0884b687, 0x18, "fld fa3,136(s1)"), // c.fld fa3,136(s1)
    (0x2a78, 0x0d063707, 0x1c, "fld fa4,208(a2)"), // c.fld fa4,208(a2)
    (0x2de8, 0x0d85b507, 0x20, "fld fa0,216(a1)"), // c.fld fa0,216(a1)
    (0x3aa0, 0x0706b407, 0x24, "fld fs0,112(a3)"), // c.fld fs0,112(a3)
    (0x3ff8, 0x0f87b707, 0x28, "fld fa4,248(a5)"), // c.fld fa4,248(a5)
    (0x28d0, 0x0904b607, 0x2c, "fld fa2,144(s1)"), // c.fld fa2,144(s1)
    (0x49e4, 0x0545a483, 0x30, "lw s1,84(a1)"), // c.lw s1,84(a1)
    (0x5700, 0x02872403, 0x34, "lw s0,40(a4)"), // c.lw s0,40(a4)
    (0x5014, 0x02042683, 0x38, "lw a3,32(s0)"), // c.lw a3,32(s0)
    (0x5d40, 0x03c52403, 0x3c, "lw s0,60(a0)"), // c.lw s0,60(a0)
    (0x5aa4, 0x0706a483, 0x40, "lw s1,112(a3)"), // c.lw s1,112(a3)
    (0x57f4, 0x06c7a683, 0x44, "lw a3,108(a5)"), // c.lw a3,108(a5)
    (0x7398, 0x0207b703, 0x48, "ld a4,32(a5)"), // c.ld a4,32(a5)
    (0x7a8c, 0x0306b583, 0x4c, "ld a1,48(a3)"), // c.ld a1,48(a3)
    (0x6570, 0x0c853603, 0x50, "ld a2,200(a0)"), // c.ld a2,200(a0)
    (0x7e00, 0x03863403, 0x54, "ld s0,56(a2)"), // c.ld s0,56(a2)
    (0x6da8, 0x0585b503, 0x58, "ld a0,88(a1)"), // c.ld a0,88(a1)
    (0x7070, 0x0e043603, 0x5c, "ld a2,224(s0)"), // c.ld a2,224(s0)
    (0xb950, 0x0ac53827, 0x60, "fsd fa2,176(a0)"), // c.fsd fa2,176(a0)
    (0xa704, 0x00973427, 0x64, "fsd fs1,8(a4)"), // c.fsd fs1,8(a4)
    (0xa998, 0x00e5b827, 0x68, "fsd fa4,16(a1)"), // c.fsd fa4,16(a1)
    (0xbfe8, 0x0ea7bc27, 0x6c, "fsd fa0,248(a5)"), // c.fsd fa0,248(a5)
    (0xb6e4, 0x0e96b427, 0x70, "fsd fs1,232(a3)"), // c.fsd fs1,232(a3)
    (0xbb44, 0x0a973827, 0x74, "fsd fs1,176(a4)"), // c.fsd fs1,176(a4)
    (0xce90, 0x00c6ac23, 0x78, "sw a2,24(a3)"), // c.sw a2,24(a3)
    (0xc13c, 0x04f52023, 0x7c, "sw a5,64(a0)"), // c.sw a5,64(a0)
    (0xc8c4, 0x0094aa23, 0x80, "sw s1,20(s1)"), // c.sw s1,20(s1)
    (0xd048, 0x02a42223, 0x84, "sw a0,36(s0)"), // c.sw a0,36(s0)
    (0xc04c, 0x00b42223, 0x88, "sw a1,4(s0)"), // c.sw a1,4(s0)
    (0xcf3c, 0x04f72c23, 0x8c, "sw a5,88(a4)"), // c.sw a5,88(a4)
    (0xfe64, 0x0e963c23, 0x90, "sd s1,248(a2)"), // c.sd s1,248(a2)
    (0xf7a4, 0x0697b423, 0x94, "sd s1,104(a5)"), // c.sd s1,104(a5)
    (0xfa5c, 0x0af63823, 0x98, "sd a5,176(a2)"), // c.sd a5,176(a2)
    (0xe35c, 0x08f73023, 0x9c, "sd a5,128(a4)"), // c.sd a5,128(a4)
    (0xf7bc, 0x06f7b423, 0xa0, "sd a5,104(a5)"), // c.sd a5,104(a5)
    (0xf174, 0x0ed53023, 0xa4, "sd a3,224(a0)"), // c.sd a3,224(a0)
    (0x0001, 0x00000013, 0xa8, "addi zero,zero,0"), // c.addi zero,0
    (0x054d, 0x01350513, 0xac, "addi a0,a0,19"), // c.addi a0,19
    (0x06a1, 0x00868693, 0xb0, "addi a3,a3,8"), // c.addi a3,8
    (0x10f5, 0xffd08093, 0xb4, "addi ra,ra,-3"), // c.addi ra,-3
    (0x0385, 0x00138393, 0xb8, "addi t2,t2,1"), // c.addi t2,1
    (0x0d9d, 0x007d8d93, 0xbc, "addi s11,s11,7"), // c.addi s11,7
    (0x1b59, 0xff6b0b13, 0xc0, "addi s6,s6,-10"), // c.addi s6,-10
    (0x21ed, 0x01b1819b, 0xc4, "addiw gp,gp,27"), // c.addiw gp,27
    (0x2895, 0x0058889b, 0xc8, "addiw a7,a7,5"), // c.addiw a7,5
    (0x3f31, 0xfecf0f1b, 0xcc, "addiw t5,t5,-20"), // c.addiw t5,-20
    (0x24cd, 0x0134849b, 0xd0, "addiw s1,s1,19"), // c.addiw s1,19
    (0x3879, 0xffe8081b, 0xd4, "addiw a6,a6,-2"), // c.addiw a6,-2
    (0x25ad, 0x00b5859b, 0xd8, "addiw a1,a1,11"), // c.addiw a1,11
    (0x5db5, 0xfed00d93, 0xdc, "addi s11,zero,-19"), // c.li s11,-19
    (0x5891, 0xfe400893, 0xe0, "addi a7,zero,-28"), // c.li a7,-28
    (0x5c31, 0xfec00c13, 0xe4, "addi s8,zero,-20"), // c.li s8,-20
    (0x4fbd, 0x00f00f93, 0xe8, "addi t6,zero,15"), // c.li t6,15
    (0x5aed, 0xffb00a93, 0xec, "addi s5,zero,-5"), // c.li s5,-5
    (0x5af1, 0xffc00a93, 0xf0, "addi s5,zero,-4"), // c.li s5,-4
    (0x7131, 0xf4010113, 0xf4, "addi sp,sp,-192"), // c.addi16sp sp,-192
    (0x7179, 0xfd010113, 0xf8, "addi sp,sp,-48"), // c.addi16sp sp,-48
    (0x6151, 0x11010113, 0xfc, "addi sp,sp,272"), // c.addi16sp sp,272
    (0x7109, 0xe8010113, 0x100, "addi sp,sp,-384"), // c.addi16sp sp,-384
    (0x7101, 0xe0010113, 0x104, "addi sp,sp,-512"), // c.addi16sp sp,-512
    (0x7409, 0xfffe2437, 0x108, "lui s0,0xfffe2"), // c.lui s0,0xfffe2
    (0x7f75, 0xffffdf37, 0x10c, "lui t5,0xffffd"), // c.lui t5,0xffffd
    (0x6495, 0x000054b7, 0x110, "lui s1,0x5"), // c.lui s1,0x5
    (0x6af1, 0x0001cab7, 0x114, "lui s5,0x1c"), // c.lui s5,0x1c
    (0x61dd, 0x000171b7, 0x118, "lui gp,0x17"), // c.lui gp,0x17
    (0x6ac5, 0x00011ab7, 0x11c, "lui s5,0x11"), // c.lui s5,0x11
    (0x8231, 0x00c65613, 0x120, "srli a2,a2,0xc"), // c.srli a2,0xc
    (0x8361, 0x01875713, 0x124, "srli a4,a4,0x18"), // c.srli a4,0x18
    (0x9371, 0x03c75713, 0x128, "srli a4,a4,0x3c"), // c.srli a4,0x3c
    (0x80e5, 0x0194d493, 0x12c, "srli s1,s1,0x19"), // c.srli s1,0x19
    (0x810d, 0x00355513, 0x130, "srli a0,a0,0x3"), // c.srli a0,0x3
    (0x91ed, 0x03b5d593, 0x134, "srli a1,a1,0x3b"), // c.srli a1,0x3b
    (0x9755, 0x43575713, 0x138, "srai a4,a4,0x35"), // c.srai a4,0x35
    (0x943d, 0x42f45413, 0x13c, "srai s0,s0,0x2f"), // c.srai s0,0x2f
    (0x961d, 0x42765613, 0x140, "srai a2,a2,0x27"), // c.srai a2,0x27
    (0x85f9, 0x41e5d593, 0x144, "srai a1,a1,0x1e"), // c.srai a1,0x1e
    (0x86a1, 0x4086d693, 0x148, "srai a3,a3,0x8"), // c.srai a3,0x8
    (0x97dd, 0x4377d793, 0x14c, "srai a5,a5,0x37"), // c.srai a5,0x37
    (0x98c9, 0xff24f493, 0x150, "andi s1,s1,-14"), // c.andi s1,-14
    (0x8b15, 0x00577713, 0x154, "andi a4,a4,5"), // c.andi a4,5
    (0x984d, 0xff347413, 0x158, "andi s0,s0,-13"), // c.andi s0,-13
    (0x8a59, 0x01667613, 0x15c, "andi a2,a2,22"), // c.andi a2,22
    (0x8805, 0x00147413, 0x160, "andi s0,s0,1"), // c.andi s0,1
    (0x982d, 0xfeb47413, 0x164, "andi s0,s0,-21"), // c.andi s0,-21
    (0x8c0d, 0x40b40433, 0x168, "sub s0,s0,a1"), // c.sub s0,a1
    (0x8d91, 0x40c585b3, 0x16c, "sub a1,a1,a2"), // c.sub a1,a2
    (0x8c8d, 0x40b484b3, 0x170, "sub s1,s1,a1"), // c.sub s1,a1
    (0x8e09, 0x40a60633, 0x174, "sub a2,a2,a0"), // c.sub a2,a0
    (0x8f81, 0x408787b3, 0x178, "sub a5,a5,s0"), // c.sub a5,s0
    (0x8c09, 0x40a40433, 0x17c, "sub s0,s0,a0"), // c.sub s0,a0
    (0x8cbd, 0x00f4c4b3, 0x180, "xor s1,s1,a5"), // c.xor s1,a5
    (0x8ca9, 0x00a4c4b3, 0x184, "xor s1,s1,a0"), // c.xor s1,a0
    (0x8da1, 0x0085c5b3, 0x188, "xor a1,a1,s0"), // c.xor a1,s0
    (0x8c29, 0x00a44433, 0x18c, "xor s0,s0,a0"), // c.xor s0,a0
    (0x8d3d, 0x00f54533, 0x190, "xor a0,a0,a5"), // c.xor a0,a5
    (0x8ead, 0x00b6c6b3, 0x194, "xor a3,a3,a1"), // c.xor a3,a1
    (0x8d59, 0x00e56533, 0x198, "or a0,a0,a4"), // c.or a0,a4
    (0x8ecd, 0x00b6e6b3, 0x19c, "or a3,a3,a1"), // c.or a3,a1
    (0x8e51, 0x00c66633, 0x1a0, "or a2,a2,a2"), // c.or a2,a2
    (0x8f4d, 0x00b76733, 0x1a4, "or a4,a4,a1"), // c.or a4,a1
    (0x8c41, 0x00846433, 0x1a8, "or s0,s0,s0"), // c.or s0,s0
    (0x8ed5, 0x00d6e6b3, 0x1ac, "or a3,a3,a3"), // c.or a3,a3
    (0x8ff1, 0x00c7f7b3, 0x1b0, "and a5,a5,a2"), // c.and a5,a2
    (0x8d79, 0x00e57533, 0x1b4, "and a0,a0,a4"), // c.and a0,a4
    (0x8c75, 0x00d47433, 0x1b8, "and s0,s0,a3"), // c.and s0,a3
    (0x8ded, 0x00b5f5b3, 0x1bc, "and a1,a1,a1"), // c.and a1,a1
    (0x8d61, 0x00857533, 0x1c0, "and a0,a0,s0"), // c.and a0,s0
    (0x8cf5, 0x00d4f4b3, 0x1c4, "and s1,s1,a3"), // c.and s1,a3
    (0x9f09, 0x40a7073b, 0x1c8, "subw a4,a4,a0"), // c.subw a4,a0
    (0x9c91, 0x40c484bb, 0x1cc, "subw s1,s1,a2"), // c.subw s1,a2
    (0x9d91, 0x40c585bb, 0x1d0, "subw a1,a1,a2"), // c.subw a1,a2
    (0x9f05, 0x4097073b, 0x1d4, "subw a4,a4,s1"), // c.subw a4,s1
    (0x9d99, 0x40e585bb, 0x1d8, "subw a1,a1,a4"), // c.subw a1,a4
    (0x9f0d, 0x40b7073b, 0x1dc, "subw a4,a4,a1"), // c.subw a4,a1
    (0x9eb9, 0x00e686bb, 0x1e0, "addw a3,a3,a4"), // c.addw a3,a4
    (0x9fbd, 0x00f787bb, 0x1e4, "addw a5,a5,a5"), // c.addw a5,a5
    (0x9c25, 0x0094043b, 0x1e8, "addw s0,s0,s1"), // c.addw s0,s1
    (0x9ebd, 0x00f686bb, 0x1ec, "addw a3,a3,a5"), // c.addw a3,a5
    (0x9d25, 0x0095053b, 0x1f0, "addw a0,a0,s1"), // c.addw a0,s1
    (0x9f25, 0x0097073b, 0x1f4, "addw a4,a4,s1"), // c.addw a4,s1
    (0xb709, 0xf03ff06f, 0x1f8, "jal zero,fa"), // c.j fffffffffffffffe
    (0xad49, 0x6920006f, 0x1fc, "jal zero,88e"), // c.j 790
    (0xab89, 0x5520006f, 0x200, "jal zero,752"), // c.j 652
    (0xb299, 0x947ff06f, 0x204, "jal zero,fffffffffffffb4a"), // c.j fffffffffffffa48
    (0xabd9, 0x5d60006f, 0x208, "jal zero,7de"), // c.j 6da
    (0xa4d5, 0x2e40006f, 0x20c, "jal zero,4f0"), // c.j 3ea
    (0xd0e9, 0xfc0481e3, 0x210, "beq s1,zero,1d2"), // c.beqz s1,ca
    (0xc4b1, 0x04048663, 0x214, "beq s1,zero,260"), // c.beqz s1,156
    (0xc2fd, 0x0e068363, 0x218, "beq a3,zero,2fe"), // c.beqz a3,1f2
    (0xd7d1, 0xf80786e3, 0x21c, "beq a5,zero,1a8"), // c.beqz a5,9a
    (0xdb29, 0xf40709e3, 0x220, "beq a4,zero,172"), // c.beqz a4,62
    (0xca21, 0x04060863, 0x224, "beq a2,zero,274"), // c.beqz a2,162
    (0xee5d, 0x0a061f63, 0x228, "bne a2,zero,2e6"), // c.bnez a2,1d2
    (0xf42d, 0xf60415e3, 0x22c, "bne s0,zero,196"), // c.bnez s0,80
    (0xf579, 0xfc0517e3, 0x230, "bne a0,zero,1fe"), // c.bnez a0,e6
    (0xe645, 0x0a061463, 0x234, "bne a2,zero,2dc"), // c.bnez a2,1c2
    (0xf85d, 0xfa041be3, 0x238, "bne s0,zero,1ee"), // c.bnez s0,d2
    (0xeead, 0x06069d63, 0x23c, "bne a3,zero,2b6"), // c.bnez a3,198
    (0x14aa, 0x02a49493, 0x240, "slli s1,s1,0x2a"), // c.slli s1,0x2a
    (0x077a, 0x01e71713, 0x244, "slli a4,a4,0x1e"), // c.slli a4,0x1e
    (0x19e2, 0x03899993, 0x248, "slli s3,s3,0x38"), // c.slli s3,0x38
    (0x03ee, 0x01b39393, 0x24c, "slli t2,t2,0x1b"), // c.slli t2,0x1b
    (0x0572, 0x01c51513, 0x250, "slli a0,a0,0x1c"), // c.slli a0,0x1c
    (0x054e, 0x01351513, 0x254, "slli a0,a0,0x13"), // c.slli a0,0x13
    (0x389a, 0x1a013887, 0x258, "fld fa7,416(sp)"), // c.fldsp fa7,416(sp)
    (0x2fca, 0x09013f87, 0x25c, "fld ft11,144(sp)"), // c.fldsp ft11,144(sp)
    (0x314a, 0x0b013107, 0x260, "fld ft2,176(sp)"), // c.fldsp ft2,176(sp)
    (0x357a, 0x1b813507, 0x264, "fld fa0,440(sp)"), // c.fldsp fa0,440(sp)
    (0x2b0e, 0x0c013b07, 0x268, "fld fs6,192(sp)"), // c.fldsp fs6,192(sp)
    (0x3292, 0x12013287, 0x26c, "fld ft5,288(sp)"), // c.fldsp ft5,288(sp)
    (0x5bfe, 0x0fc12b83, 0x270, "lw s7,252(sp)"), // c.lwsp s7,252(sp)
    (0x5bca, 0x0b012b83, 0x274, "lw s7,176(sp)"), // c.lwsp s7,176(sp)
    (0x599a, 0x0a412983, 0x278, "lw s3,164(sp)"), // c.lwsp s3,164(sp)
    (0x5456, 0x07412403, 0x27c, "lw s0,116(sp)"), // c.lwsp s0,116(sp)
    (0x4daa, 0x08812d83, 0x280, "lw s11,136(sp)"), // c.lwsp s11,136(sp)
    (0x54d6, 0x07412483, 0x284, "lw s1,116(sp)"), // c.lwsp s1,116(sp)
    (0x7f26, 0x06813f03, 0x288, "ld t5,104(sp)"), // c.ldsp t5,104(sp)
    (0x70e6, 0x07813083, 0x28c, "ld ra,120(sp)"), // c.ldsp ra,120(sp)
    (0x7fea, 0x0b813f83, 0x290, "ld t6,184(sp)"), // c.ldsp t6,184(sp)
    (0x6d06, 0x04013d03, 0x294, "ld s10,64(sp)"), // c.ldsp s10,64(sp)
    (0x7cfa, 0x1b813c83, 0x298, "ld s9,440(sp)"), // c.ldsp s9,440(sp)
    (0x6262, 0x01813203, 0x29c, "ld tp,24(sp)"), // c.ldsp tp,24(sp)
    (0x8982, 0x00098067, 0x2a0, "jalr zero,0(s3)"), // c.jr s3
    (0x8482, 0x00048067, 0x2a4, "jalr zero,0(s1)"), // c.jr s1
    (0x8682, 0x00068067, 0x2a8, "jalr zero,0(a3)"), // c.jr a3
    (0x8782, 0x00078067, 0x2ac, "jalr zero,0(a5)"), // c.jr a5
    (0x8182, 0x00018067, 0x2b0, "jalr zero,0(gp)"), // c.jr gp
    (0x8e8e, 0x00300eb3, 0x2b4, "add t4,zero,gp"), // c.mv t4,gp
    (0x8d96, 0x00500db3, 0x2b8, "add s11,zero,t0"), // c.mv s11,t0
    (0x893a, 0x00e00933, 0x2bc, "add s2,zero,a4"), // c.mv s2,a4
    (0x874e, 0x01300733, 0x2c0, "add a4,zero,s3"), // c.mv a4,s3
    (0x81ea, 0x01a001b3, 0x2c4, "add gp,zero,s10"), // c.mv gp,s10
    (0x87f6, 0x01d007b3, 0x2c8, "add a5,zero,t4"), // c.mv a5,t4
    (0x9002, 0x00100073, 0x2cc, "ebreak"), // c.ebreak
    (0x9802, 0x000800e7, 0x2d0, "jalr ra,0(a6)"), // c.jalr a6
    (0x9e02, 0x000e00e7, 0x2d4, "jalr ra,0(t3)"), // c.jalr t3
    (0x9782, 0x000780e7, 0x2d8, "jalr ra,0(a5)"), // c.jalr a5
    (0x9882, 0x000880e7, 0x2dc, "jalr ra,0(a7)"), // c.jalr a7
    (0x9982, 0x000980e7, 0x2e0, "jalr ra,0(s3)"), // c.jalr s3
    (0x90ae, 0x00b080b3, 0x2e4, "add ra,ra,a1"), // c.add ra,a1
    (0x9392, 0x004383b3, 0x2e8, "add t2,t2,tp"), // c.add t2,tp
    (0x995e, 0x01790933, 0x2ec, "add s2,s2,s7"), // c.add s2,s7
    (0x927e, 0x01f20233, 0x2f0, "add tp,tp,t6"), // c.add tp,t6
    (0x9cda, 0x016c8cb3, 0x2f4, "add s9,s9,s6"), // c.add s9,s6
    (0x9f36, 0x00df0f33, 0x2f8, "add t5,t5,a3"), // c.add t5,a3
    (0xb8ba, 0x06e13827, 0x2fc, "fsd fa4,112(sp)"), // c.fsdsp fa4,112(sp)
    (0xba82, 0x16013827, 0x300, "fsd ft0,368(sp)"), // c.fsdsp ft0,368(sp)
    (0xa9ea, 0x0da13827, 0x304, "fsd fs10,208(sp)"), // c.fsdsp fs10,208(sp)
    (0xb176, 0x0bd13027, 0x308, "fsd ft9,160(sp)"), // c.fsdsp ft9,160(sp)
    (0xb246, 0x13113027, 0x30c, "fsd fa7,288(sp)"), // c.fsdsp fa7,288(sp)
    (0xa666, 0x11913427, 0x310, "fsd fs9,264(sp)"), // c.fsdsp fs9,264(sp)
    (0xd362, 0x0b812223, 0x314, "sw s8,164(sp)"), // c.swsp s8,164(sp)
    (0xd58e, 0x0e312423, 0x318, "sw gp,232(sp)"), // c.swsp gp,232(sp)
    (0xd892, 0x06412823, 0x31c, "sw tp,112(sp)"), // c.swsp tp,112(sp)
    (0xc54a, 0x09212423, 0x320, "sw s2,136(sp)"), // c.swsp s2,136(sp)
    (0xc456, 0x01512423, 0x324, "sw s5,8(sp)"), // c.swsp s5,8(sp)
    (0xc416, 0x00512423, 0x328, "sw t0,8(sp)"), // c.swsp t0,8(sp)
    (0xf40a, 0x02213423, 0x32c, "sd sp,40(sp)"), // c.sdsp sp,40(sp)
    (0xf32a, 0x1aa13023, 0x330, "sd a0,416(sp)"), // c.sdsp a0,416(sp)
    (0xf8ae, 0x06b13823, 0x334, "sd a1,112(sp)"), // c.sdsp a1,112(sp)
    (0xf922, 0x0a813823, 0x338, "sd s0,176(sp)"), // c.sdsp s0,176(sp)
    (0xf99e, 0x0e713823, 0x33c, "sd t2,240(sp)"), // c.sdsp t2,240(sp)
    (0xfa06, 0x12113823, 0x340, "sd ra,304(sp)"), // c.sdsp ra,304(sp)
];
