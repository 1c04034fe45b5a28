// The generic main of a hostemu program: `prog JOB RESULT` reads the job,
// runs the harness's hostemu_run(job), writes every buffer to RESULT.
// Included last in the translation unit, after the generated sources.
#pragma once
#include "core.h"

int main(int argc, char** argv) { return hostemu::run_main(argc, argv); }
