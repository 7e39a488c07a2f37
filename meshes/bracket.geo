// An L-shaped bracket, in metres: a base plate 60 x 40 x 6 mm with a bolt hole of 12 mm diameter, and an upright
// 6 x 40 x 50 mm at its far end. Physical groups: the volume "bracket", the base's end face x = 0 "clamp", the
// upright's top face z = 50 mm "load", and the hole's wall "bolt".
SetFactory("OpenCASCADE");
Box(1) = {0, 0, 0, 0.060, 0.040, 0.006};
Box(2) = {0.054, 0, 0, 0.006, 0.040, 0.050};
Cylinder(3) = {0.020, 0.020, -0.001, 0, 0, 0.008, 0.006};
u() = BooleanUnion{ Volume{1}; Delete; }{ Volume{2}; Delete; };
b() = BooleanDifference{ Volume{u()}; Delete; }{ Volume{3}; Delete; };
eps = 1e-6;
clamp() = Surface In BoundingBox{-eps, -eps, -eps, eps, 0.040 + eps, 0.006 + eps};
load() = Surface In BoundingBox{0.054 - eps, -eps, 0.050 - eps, 0.060 + eps, 0.040 + eps, 0.050 + eps};
bolt() = Surface In BoundingBox{0.014 - eps, 0.014 - eps, -eps, 0.026 + eps, 0.026 + eps, 0.006 + eps};
Physical Volume("bracket") = {b()};
Physical Surface("clamp") = {clamp()};
Physical Surface("load") = {load()};
Physical Surface("bolt") = {bolt()};
