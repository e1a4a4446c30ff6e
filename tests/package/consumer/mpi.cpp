// Links an installed accel_mpi; started without mpirun it must see no MPI
// launcher (ACCEL_MPI=0 makes that certain) and resolve nothing. Exit 0 then.
#include <accel/mpi.hpp>

#include <iostream>

int main() {
#ifndef ACCEL_HAVE_MPI
    std::cerr << "ACCEL_HAVE_MPI is not defined by accel::mpi / accel-mpi.pc\n";
    return 1;
#else
    const bool launched = accel::mpi::launched_by_mpi();
    std::cout << "installed accel_mpi: launched by MPI: " << (launched ? "yes" : "no") << "\n";
    return launched ? 1 : 0;
#endif
}
