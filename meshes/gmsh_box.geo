// Gmsh input for meshes/gmsh_box_h27.msh: a 2 m x 1 m x 1 m box, 2 x 1 x 1 structured 27-node hexahedra.
// Regenerate with:  gmsh meshes/gmsh_box.geo -3 -o meshes/gmsh_box_h27.msh
SetFactory("OpenCASCADE");
Box(1) = {0, 0, 0, 2.0, 1.0, 1.0};
Transfinite Curve {:} = 2;
Transfinite Curve {9, 10, 11, 12} = 3;   // the four edges along x
Transfinite Surface {:};
Recombine Surface {:};
Transfinite Volume {1};
Physical Volume("body") = {1};
Physical Surface("xmin") = {1};
Physical Surface("xmax") = {2};
Mesh.ElementOrder = 2;
Mesh.SecondOrderIncomplete = 0;
Mesh.MshFileVersion = 4.1;
Mesh.Binary = 0;
