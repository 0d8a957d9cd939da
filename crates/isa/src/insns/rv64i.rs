//! RV64I (and Zifencei's `fence.i`).

macro_rules! rv64i {
    ($($chain:tt)*) => { isa_chain! { $($chain)* ;
        extensions {
            /// The base integer ISA (always present).
            I = "i", hwprobe None;
            /// `fence.i`.
            Zifencei = "zifencei", hwprobe None;
        }
        Lui        "lui"          0x0000007f => 0x00000037, U, Alu, Base;
        Auipc      "auipc"        0x0000007f => 0x00000017, U, Alu, Base;
        Jal        "jal"          0x0000007f => 0x0000006f, J, Jal, Base;
        Jalr       "jalr"         0x0000707f => 0x00000067, Jalr, Alu, Base;
        Beq        "beq"          0x0000707f => 0x00000063, B, Alu, Base;
        Bne        "bne"          0x0000707f => 0x00001063, B, Alu, Base;
        Blt        "blt"          0x0000707f => 0x00004063, B, Alu, Base;
        Bge        "bge"          0x0000707f => 0x00005063, B, Alu, Base;
        Bltu       "bltu"         0x0000707f => 0x00006063, B, Alu, Base;
        Bgeu       "bgeu"         0x0000707f => 0x00007063, B, Alu, Base;
        Lb         "lb"           0x0000707f => 0x00000003, LoadX, Load, Base;
        Lh         "lh"           0x0000707f => 0x00001003, LoadX, Load, Base;
        Lw         "lw"           0x0000707f => 0x00002003, LoadX, Load, Base;
        Ld         "ld"           0x0000707f => 0x00003003, LoadX, Load, Base;
        Lbu        "lbu"          0x0000707f => 0x00004003, LoadX, Load, Base;
        Lhu        "lhu"          0x0000707f => 0x00005003, LoadX, Load, Base;
        Lwu        "lwu"          0x0000707f => 0x00006003, LoadX, Load, Base;
        Sb         "sb"           0x0000707f => 0x00000023, StoreX, Store, Base;
        Sh         "sh"           0x0000707f => 0x00001023, StoreX, Store, Base;
        Sw         "sw"           0x0000707f => 0x00002023, StoreX, Store, Base;
        Sd         "sd"           0x0000707f => 0x00003023, StoreX, Store, Base;
        Addi       "addi"         0x0000707f => 0x00000013, Imm, Alu, Base;
        Slti       "slti"         0x0000707f => 0x00002013, Imm, Alu, Base;
        Sltiu      "sltiu"        0x0000707f => 0x00003013, Imm, Alu, Base;
        Xori       "xori"         0x0000707f => 0x00004013, Imm, Alu, Base;
        Ori        "ori"          0x0000707f => 0x00006013, Imm, Alu, Base;
        Andi       "andi"         0x0000707f => 0x00007013, Imm, Alu, Base;
        Slli       "slli"         0xfc00707f => 0x00001013, Shamt, Alu, Base;
        Srli       "srli"         0xfc00707f => 0x00005013, Shamt, Alu, Base;
        Srai       "srai"         0xfc00707f => 0x40005013, Shamt, Alu, Base;
        Add        "add"          0xfe00707f => 0x00000033, Rrr, Alu, Base;
        Sub        "sub"          0xfe00707f => 0x40000033, Rrr, Alu, Base;
        Sll        "sll"          0xfe00707f => 0x00001033, Rrr, Alu, Base;
        Slt        "slt"          0xfe00707f => 0x00002033, Rrr, Alu, Base;
        Sltu       "sltu"         0xfe00707f => 0x00003033, Rrr, Alu, Base;
        Xor        "xor"          0xfe00707f => 0x00004033, Rrr, Alu, Base;
        Srl        "srl"          0xfe00707f => 0x00005033, Rrr, Alu, Base;
        Sra        "sra"          0xfe00707f => 0x40005033, Rrr, Alu, Base;
        Or         "or"           0xfe00707f => 0x00006033, Rrr, Alu, Base;
        And        "and"          0xfe00707f => 0x00007033, Rrr, Alu, Base;
        Addiw      "addiw"        0x0000707f => 0x0000001b, Imm, Alu, Base;
        Slliw      "slliw"        0xfe00707f => 0x0000101b, Shamt, Alu, Base;
        Srliw      "srliw"        0xfe00707f => 0x0000501b, Shamt, Alu, Base;
        Sraiw      "sraiw"        0xfe00707f => 0x4000501b, Shamt, Alu, Base;
        Addw       "addw"         0xfe00707f => 0x0000003b, Rrr, Alu, Base;
        Subw       "subw"         0xfe00707f => 0x4000003b, Rrr, Alu, Base;
        Sllw       "sllw"         0xfe00707f => 0x0000103b, Rrr, Alu, Base;
        Srlw       "srlw"         0xfe00707f => 0x0000503b, Rrr, Alu, Base;
        Sraw       "sraw"         0xfe00707f => 0x4000503b, Rrr, Alu, Base;
        Fence      "fence"        0x0000707f => 0x0000000f, Fence, Alu, Base;
        FenceI     "fence.i"      0x0000707f => 0x0000100f, Bare, Alu, Zifencei;
        Ecall      "ecall"        0xffffffff => 0x00000073, Bare, Alu, Base;
        Ebreak     "ebreak"       0xffffffff => 0x00100073, Bare, Alu, Base;
    } };
}
