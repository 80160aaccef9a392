// SPDX-License-Identifier: GPL-2.0
#include "kbench_ktap.h"
int main(void){ksft_print_header();ksft_set_plan(0);ksft_finished();}
